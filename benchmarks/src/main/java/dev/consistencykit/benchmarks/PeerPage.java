package dev.consistencykit.benchmarks;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** The peer table as a self-contained HTML page: per cell, bars of throughput and of round trips per operation. */
final class PeerPage {

    private static final String[] COLOURS = {"#2b6cb0", "#c05621", "#2f855a", "#6b46c1"};

    private PeerPage() {
    }

    static String render(List<Cell> cells, String machine, String server) {
        StringBuilder html = new StringBuilder();
        html.append("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>consistency-kit and its")
                .append(" peers</title><style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}")
                .append("h2{font-size:1.1em;margin-top:2em}table{border-collapse:collapse;margin:.5em 0}")
                .append("td,th{padding:.2em .6em;text-align:right;border-bottom:1px solid #ddd}")
                .append("td:first-child,th:first-child{text-align:left}.failed{color:#c53030;text-align:left}.left{color:#555;text-align:left;font-size:.9em}")
                .append(".charts{display:flex;gap:2em;flex-wrap:wrap}</style></head><body>")
                .append("<h1>consistency-kit and its peers</h1><p>Measured ").append(escape(machine)).append(" on ")
                .append(escape(server)).append(". Same data, same callers, same time per side, in interleaved")
                .append(" phases; round trips and bytes counted by a proxy in front of the server.</p>");
        for (Cell cell : cells) {
            html.append("<h2>").append(escape(String.format(Locale.ROOT, "%s, %,d documents, %d caller%s",
                    cell.workload(), cell.documents(), cell.callers(), cell.callers() == 1 ? "" : "s")))
                    .append("</h2><table><tr><th>side</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th>")
                    .append("<th>round trips/op</th><th>bytes/op</th><th>check</th></tr>");
            for (SideResult side : cell.sides()) {
                html.append("<tr><td>").append(escape(side.name())).append("</td>");
                if (!side.failure().isEmpty()) {
                    html.append("<td colspan=\"6\" class=\"failed\">failed: ").append(escape(side.failure()))
                            .append("</td></tr>");
                    continue;
                }
                html.append(String.format(Locale.ROOT, "<td>%.0f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>"
                        + "<td>%.0f</td>", side.phase().perSecond(), side.phase().latencyMillis(50),
                        side.phase().latencyMillis(99), side.roundTripsPerOp(), side.bytesPerOp()))
                        .append("<td>").append(side.problems().isEmpty() ? "ok"
                                : escape(String.join("; ", side.problems()))).append("</td></tr>");
                if (!side.left().isEmpty() || !side.notes().isEmpty()) {
                    html.append("<tr><td></td><td colspan=\"6\" class=\"left\">left: ")
                            .append(escape(side.leftLine())).append("</td></tr>");
                }
            }
            html.append("</table><div class=\"charts\">")
                    .append(bars("operations per second", cell, s -> s.phase().perSecond()))
                    .append(bars("round trips per operation", cell, SideResult::roundTripsPerOp))
                    .append("</div>");
        }
        return html.append("</body></html>\n").toString();
    }

    private static String bars(String title, Cell cell, ToDoubleFunction<SideResult> value) {
        double max = cell.sides().stream().filter(SideResult::ran).mapToDouble(value).max().orElse(1);
        int rowHeight = 22;
        int width = 420;
        int label = 300;
        StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
                "<svg role=\"img\" aria-label=\"%s\" width=\"%d\" height=\"%d\"><text x=\"0\" y=\"14\""
                        + " font-weight=\"bold\">%s</text>", escape(title), width + label + 60,
                rowHeight * cell.sides().size() + 24, escape(title)));
        for (int i = 0; i < cell.sides().size(); i++) {
            SideResult side = cell.sides().get(i);
            int y = 24 + i * rowHeight;
            svg.append(String.format(Locale.ROOT, "<text x=\"0\" y=\"%d\">%s</text>", y + 15, escape(side.name())));
            if (!side.ran()) {
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#c53030\">did not run</text>",
                        label, y + 15));
                continue;
            }
            double v = value.applyAsDouble(side);
            int w = (int) Math.max(1, Math.round(width * v / max));
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>", label, y + 2, w, rowHeight - 6,
                    COLOURS[i % COLOURS.length], label + w + 4, y + 15, v >= 100
                            ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v)));
        }
        return svg.append("</svg>").toString();
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
