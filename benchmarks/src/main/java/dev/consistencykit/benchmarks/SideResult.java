package dev.consistencykit.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import org.bson.Document;

/**
 * One side's figures in one cell of the table.
 *
 * @param name     the side
 * @param failure  what failed, as measured, when the side could not run; empty when it ran
 * @param phase    its phases added up
 * @param traffic  what the proxy counted for its database during those phases
 * @param problems what its check found wrong with the data after the runs
 * @param left     documents per collection of its database after the runs
 * @param notes    what it left on the user's documents besides
 */
record SideResult(String name, String failure, Phase phase, CountingProxy.Traffic traffic, List<String> problems,
                  Map<String, Long> left, List<String> notes) {

    SideResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(failure, "failure");
        problems = List.copyOf(problems);
        left = Map.copyOf(left);
        notes = List.copyOf(notes);
    }

    static SideResult failed(String name, String failure) {
        return new SideResult(name, failure, Phase.none(), CountingProxy.Traffic.NONE, List.of(), Map.of(),
                List.of());
    }

    /** The documents left, by collection, as one line. */
    String leftLine() {
        StringBuilder line = new StringBuilder();
        new TreeMap<>(left).forEach((collection, n) -> line.append(line.length() == 0 ? "" : ", ")
                .append(collection).append(' ').append(String.format(java.util.Locale.ROOT, "%,d", n)));
        notes.forEach(note -> line.append("; ").append(note));
        return line.toString();
    }

    boolean ran() {
        return failure.isEmpty() && phase.operations() > 0;
    }

    double roundTripsPerOp() {
        return phase.operations() == 0 ? Double.NaN : (double) traffic.commands() / phase.operations();
    }

    double bytesPerOp() {
        return phase.operations() == 0 ? Double.NaN : (double) traffic.bytes() / phase.operations();
    }

    /** Commands per operation, by command name. */
    Map<String, Double> commandsPerOp() {
        Map<String, Double> perOp = new TreeMap<>();
        if (phase.operations() > 0) {
            traffic.byCommand().forEach((command, n) -> perOp.put(command, round((double) n / phase.operations())));
        }
        return perOp;
    }

    static double round(double v) {
        return Double.isNaN(v) ? v : Math.round(v * 1000.0) / 1000.0;
    }

    Document json() {
        Document d = new Document("side", name);
        if (!failure.isEmpty()) {
            return d.append("failed", failure);
        }
        Document commands = new Document();
        commandsPerOp().forEach(commands::append);
        return d.append("operations", phase.operations()).append("seconds", round(phase.elapsed().toNanos() / 1e9))
                .append("opsPerSec", round(phase.perSecond())).append("p50Millis", round(phase.latencyMillis(50)))
                .append("p99Millis", round(phase.latencyMillis(99)))
                .append("roundTripsPerOp", round(roundTripsPerOp())).append("bytesPerOp", round(bytesPerOp()))
                .append("failures", phase.failures()).append("firstFailure", phase.firstFailure())
                .append("commandsPerOp", commands).append("problems", problems)
                .append("documentsLeft", new Document(new TreeMap<String, Object>(left))).append("notes", notes);
    }
}
