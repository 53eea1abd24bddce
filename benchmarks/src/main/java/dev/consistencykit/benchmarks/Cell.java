package dev.consistencykit.benchmarks;

import java.util.List;
import java.util.Locale;

import org.bson.Document;

/**
 * One row group of the table: a workload at one size and one number of callers, our side first.
 *
 * @param workload  the workload
 * @param documents documents in the collections it touches
 * @param callers   concurrent callers on every side
 * @param seconds   measured seconds per side
 * @param sides     ours first, then the peers
 */
record Cell(String workload, int documents, int callers, int seconds, List<SideResult> sides) {

    Cell {
        sides = List.copyOf(sides);
    }

    SideResult ours() {
        return sides.get(0);
    }

    Document json() {
        Document ratios = new Document();
        for (SideResult peer : sides.subList(1, sides.size())) {
            if (ours().ran() && peer.ran()) {
                ratios.append(peer.name(), new Document("opsPerSec",
                        SideResult.round(ours().phase().perSecond() / peer.phase().perSecond()))
                        .append("roundTripsPerOp", SideResult.round(ours().roundTripsPerOp() / peer.roundTripsPerOp()))
                        .append("bytesPerOp", SideResult.round(ours().bytesPerOp() / peer.bytesPerOp())));
            }
        }
        return new Document("workload", workload).append("documents", documents).append("callers", callers)
                .append("secondsPerSide", seconds).append("sides", sides.stream().map(SideResult::json).toList())
                .append("oursOverPeer", ratios);
    }

    /** The cell as text: a heading, then one line per side. */
    String table() {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "%s, %,d documents, %d caller%s%n",
                workload, documents, callers, callers == 1 ? "" : "s"));
        out.append(String.format(Locale.ROOT, "  %-40s %9s %8s %8s %9s %9s  %s%n", "side", "ops/s", "p50 ms",
                "p99 ms", "trips/op", "bytes/op", "ours / peer (ops/s, trips)"));
        for (int i = 0; i < sides.size(); i++) {
            SideResult side = sides.get(i);
            if (!side.failure().isEmpty()) {
                out.append(String.format(Locale.ROOT, "  %-40s failed: %s%n", side.name(), side.failure()));
                continue;
            }
            String ratio = "";
            if (i > 0 && side.ran() && ours().ran()) {
                ratio = String.format(Locale.ROOT, "%.2f, %.2f", ours().phase().perSecond() / side.phase().perSecond(),
                        ours().roundTripsPerOp() / side.roundTripsPerOp());
            }
            String check = side.problems().isEmpty() ? "" : "  CHECK FAILED: " + String.join("; ", side.problems());
            String failures = side.phase().failures() == 0 ? "" : "  (" + side.phase().failures()
                    + " failed: " + side.phase().firstFailure() + ")";
            out.append(String.format(Locale.ROOT, "  %-40s %9.0f %8.2f %8.2f %9.2f %9.0f  %s%s%s%n", side.name(),
                    side.phase().perSecond(), side.phase().latencyMillis(50), side.phase().latencyMillis(99),
                    side.roundTripsPerOp(), side.bytesPerOp(), ratio, failures, check));
            if (!side.left().isEmpty() || !side.notes().isEmpty()) {
                out.append(String.format(Locale.ROOT, "  %-40s left: %s%n", "", side.leftLine()));
            }
        }
        return out.toString();
    }
}
