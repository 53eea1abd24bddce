package dev.consistencykit.examples.lab;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import com.google.common.html.HtmlEscapers;

/**
 * The comparison as a self-contained HTML page: the table, a throughput chart and a reader-anomaly chart (inline SVG,
 * no script or network needed), and the data as JSON in the page.
 */
public final class CompareReport {

    private static final int BAR_WIDTH = 520;

    private CompareReport() {
    }

    /** The page for {@code entries}; {@code command} is the command line that produced them. */
    public static String html(List<Comparison.Entry> entries, String command) {
        StringBuilder page = new StringBuilder();
        page.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<title>consistency-kit compare</title><style>")
                .append("body{font-family:system-ui,sans-serif;margin:2rem;color:#222}")
                .append("table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;")
                .append("text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}")
                .append(".bad{color:#b00020;font-weight:bold}.ok{color:#1b5e20}svg text{font-size:12px}")
                .append("</style></head><body>\n<h1>The five patterns on the same workloads</h1>\n<p>")
                .append(escape(command)).append(" — writers crash at random writes and restart; concurrent readers"
                        + " check every read; recovery runs throughout and once more at the end.</p>\n");
        page.append("<table id=\"results\"><tr><th>pattern</th><th>workload</th><th>ops/s</th><th>round trips/op</th>")
                .append("<th>writes/op</th><th>p50 ms</th><th>p99 ms</th><th>crashes</th><th>reader anomalies</th>")
                .append("<th>recovery s</th><th>violations</th></tr>\n");
        for (Comparison.Entry e : entries) {
            page.append("<tr><td>").append(escape(e.name())).append("</td><td>").append(e.workload())
                    .append("</td><td>").append(fmt(e.opsPerSec(), 0)).append("</td><td>")
                    .append(fmt(e.roundTripsPerOp(), 1)).append("</td><td>").append(fmt(e.writesPerOp(), 1))
                    .append("</td><td>").append(fmt(e.p50Millis(), 2)).append("</td><td>")
                    .append(fmt(e.p99Millis(), 2)).append("</td><td>").append(e.crashes()).append("</td><td")
                    .append(e.readerAnomalies() > 0 ? " class=\"bad\">" : " class=\"ok\">")
                    .append(e.readerAnomalies()).append(" of ").append(e.reads()).append("</td><td>")
                    .append(e.recoverySeconds().map(s -> fmt(s, 2)).orElse("never")).append("</td><td")
                    .append(e.violations().isEmpty() ? " class=\"ok\">0" : " class=\"bad\">" + e.violations().size())
                    .append("</td></tr>\n");
        }
        page.append("</table>\n<h2>Throughput (operations per second)</h2>\n")
                .append(chart("throughput-chart", entries, Comparison.Entry::opsPerSec, "%.0f"))
                .append("<h2>Reads that broke the invariant (% of reads)</h2>\n")
                .append(chart("anomalies-chart", entries, CompareReport::anomalyPercent, "%.2f%%"))
                .append("<script type=\"application/json\" id=\"compare-data\">")
                .append(new Document("command", command).append("entries", entries.stream()
                        .map(Comparison.Entry::json).toList()).toJson(JsonWriterSettings.builder()
                        .outputMode(JsonMode.RELAXED).build()).replace("</", "<\\/"))
                .append("</script>\n</body></html>\n");
        return page.toString();
    }

    static double anomalyPercent(Comparison.Entry e) {
        return e.reads() == 0 ? 0 : 100.0 * e.readerAnomalies() / e.reads();
    }

    /** A horizontal bar chart, one labelled bar per entry, each bar carrying its value in {@code data-value}. */
    private static String chart(String id, List<Comparison.Entry> entries, ToDoubleFunction<Comparison.Entry> value,
                                String format) {
        double max = entries.stream().mapToDouble(value).max().orElse(0);
        int rowHeight = 26;
        int labelWidth = 230;
        StringBuilder svg = new StringBuilder("<svg id=\"" + id + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
                + (labelWidth + BAR_WIDTH + 90) + "\" height=\"" + (entries.size() * rowHeight + 10) + "\">\n");
        for (int i = 0; i < entries.size(); i++) {
            Comparison.Entry e = entries.get(i);
            double v = value.applyAsDouble(e);
            int width = max == 0 ? 0 : (int) Math.round(v / max * BAR_WIDTH);
            int y = 5 + i * rowHeight;
            String colour = "naive".equals(e.pattern()) ? "#b00020" : "#1565c0";
            svg.append("<text x=\"0\" y=\"").append(y + 15).append("\">").append(escape(e.name())).append("</text>")
                    .append("<rect class=\"bar\" data-name=\"").append(escape(e.name())).append("\" data-value=\"")
                    .append(fmt(v, 3)).append("\" x=\"").append(labelWidth).append("\" y=\"").append(y)
                    .append("\" width=\"").append(width).append("\" height=\"20\" fill=\"").append(colour)
                    .append("\"/><text x=\"").append(labelWidth + width + 6).append("\" y=\"").append(y + 15)
                    .append("\">").append(String.format(Locale.ROOT, format, v)).append("</text>\n");
        }
        return svg.append("</svg>\n").toString();
    }

    private static String fmt(double v, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String escape(String s) {
        return HtmlEscapers.htmlEscaper().escape(s);
    }
}
