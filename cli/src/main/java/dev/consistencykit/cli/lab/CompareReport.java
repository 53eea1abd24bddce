package dev.consistencykit.cli.lab;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import com.google.common.html.HtmlEscapers;

/**
 * The comparison as a self-contained HTML page: the table, one chart per measure with the entries grouped under
 * their workload (inline SVG, no script or network needed), what each pattern's anomalies mean, and the data as JSON
 * in the page.
 */
public final class CompareReport {

    private static final int BAR_WIDTH = 480;
    private static final int LABEL_WIDTH = 250;
    private static final int ROW_HEIGHT = 24;

    private CompareReport() {
    }

    /** The page for {@code result}; {@code command} is the command line that produced it. */
    public static String html(Comparison.Result result, String command) {
        List<Comparison.Entry> entries = result.entries();
        StringBuilder page = new StringBuilder();
        page.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<title>consistency-kit compare</title><style>")
                .append("body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:72rem}")
                .append("table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;")
                .append("text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}")
                .append(".bad{color:#b00020;font-weight:bold}.ok{color:#1b5e20}.none{color:#666}")
                .append("svg text{font-size:12px}svg text.group{font-weight:bold;font-size:13px}")
                .append("dt{font-weight:bold;margin-top:.5rem}</style></head><body>\n")
                .append("<h1>The five patterns on the same workloads</h1>\n<p>").append(escape(command))
                .append(" — each pattern in the configuration its README recommends; callers crash at random writes and")
                .append(" restart; readers read the documents as stored (raw) and through the pattern's own consistent")
                .append(" read; recovery runs throughout and once more at the end. The same --seed gives the same crash")
                .append(" schedule.</p>\n");
        if (result.interrupted()) {
            page.append("<p class=\"bad\" id=\"interrupted\">Interrupted: ").append(entries.size()).append(" of ")
                    .append(result.contenders()).append(" patterns finished; their rows follow.</p>\n");
        }
        page.append("<table id=\"results\"><tr><th>pattern</th><th>workload</th><th>ops/s</th>")
                .append("<th>round trips/op (caller)</th><th>background round trips/op</th><th>writes/op</th>")
                .append("<th>p50 ms</th><th>p99 ms</th><th>crashes</th><th>raw reader anomalies</th>")
                .append("<th>pattern reader anomalies</th><th>recovery s</th><th>violations</th></tr>\n");
        for (Comparison.Entry e : entries) {
            page.append("<tr><td>").append(escape(e.name())).append("</td><td>").append(e.workload())
                    .append("</td><td>").append(fmt(e.opsPerSec(), 0)).append("</td><td>")
                    .append(fmt(e.roundTripsPerOp(), 1)).append("</td><td>")
                    .append(fmt(e.backgroundRoundTripsPerOp(), 1)).append("</td><td>")
                    .append(fmt(e.writesPerOp(), 1)).append("</td><td>").append(fmt(e.p50Millis(), 2))
                    .append("</td><td>").append(fmt(e.p99Millis(), 2)).append("</td><td>").append(e.crashes())
                    .append("</td><td").append(e.rawReaderAnomalies() > 0 ? " class=\"bad\">" : " class=\"ok\">")
                    .append(e.rawReaderAnomalies()).append(" of ").append(e.rawReads()).append("</td><td")
                    .append(e.patternReaderAnomalies().map(n -> (n > 0 ? " class=\"bad\">" : " class=\"ok\">") + n
                            + " of " + e.patternReads()).orElse(" class=\"none\">no consistent read"))
                    .append("</td><td>").append(e.recoverySeconds().map(s -> fmt(s, 2)).orElse("never"))
                    .append("</td><td")
                    .append(e.violations().isEmpty() ? " class=\"ok\">0" : " class=\"bad\">" + e.violations().size())
                    .append("</td></tr>\n");
        }
        page.append("</table>\n")
                .append("<h2>Throughput (caller operations per second), by workload</h2>\n")
                .append(chart("throughput-chart", entries, e -> Optional.of(e.opsPerSec()), "%.0f", ""))
                .append("<h2>Round trips per operation (caller + background), by workload</h2>\n")
                .append(chart("round-trips-chart", entries,
                        e -> Optional.of(e.roundTripsPerOp() + e.backgroundRoundTripsPerOp()), "%.1f", ""))
                .append("<h2>Raw reads that broke the invariant (% of reads of the documents as stored), by workload</h2>\n")
                .append(chart("raw-anomalies-chart", entries,
                        e -> Optional.of(percent(e.rawReaderAnomalies(), e.rawReads())), "%.2f%%", ""))
                .append("<h2>Reads through the pattern's consistent read that broke the invariant (%), by workload</h2>\n")
                .append(chart("pattern-anomalies-chart", entries,
                        e -> e.patternReaderAnomalies().map(n -> percent(n, e.patternReads())), "%.2f%%",
                        "no consistent read"))
                .append("<h2>What the anomalies mean</h2>\n<dl id=\"meanings\">\n");
        for (Comparison.Entry e : entries) {
            page.append("<dt>").append(escape(e.name())).append(" (").append(e.workload()).append(")</dt><dd>")
                    .append(escape(e.anomalies()));
            if (!e.note().isEmpty()) {
                page.append(" <em>").append(escape(e.note())).append(".</em>");
            }
            page.append("</dd>\n");
        }
        page.append("</dl>\n<script type=\"application/json\" id=\"compare-data\">")
                .append(new Document("command", command).append("interrupted", result.interrupted())
                        .append("entries", entries.stream().map(Comparison.Entry::json).toList())
                        .toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build())
                        .replace("</", "<\\/"))
                .append("</script>\n</body></html>\n");
        return page.toString();
    }

    static double percent(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }

    /**
     * A horizontal bar chart: the entries grouped under a heading per workload, one labelled bar per entry, each bar
     * carrying its value in {@code data-value} and its workload in {@code data-workload}; an entry without a value
     * shows {@code missing} instead of a bar.
     */
    private static String chart(String id, List<Comparison.Entry> entries,
                                Function<Comparison.Entry, Optional<Double>> value, String format, String missing) {
        Map<String, List<Comparison.Entry>> byWorkload = new LinkedHashMap<>();
        entries.forEach(e -> byWorkload.computeIfAbsent(e.workload(), w -> new java.util.ArrayList<>()).add(e));
        double max = entries.stream().map(value).flatMap(Optional::stream).mapToDouble(Double::doubleValue).max()
                .orElse(0);
        int rows = entries.size() + byWorkload.size();
        StringBuilder svg = new StringBuilder("<svg id=\"" + id + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
                + (LABEL_WIDTH + BAR_WIDTH + 110) + "\" height=\"" + (rows * ROW_HEIGHT + 10) + "\">\n");
        int row = 0;
        for (Map.Entry<String, List<Comparison.Entry>> group : byWorkload.entrySet()) {
            int gy = 5 + row++ * ROW_HEIGHT;
            svg.append("<text class=\"group\" x=\"0\" y=\"").append(gy + 15).append("\">workload: ")
                    .append(escape(group.getKey())).append("</text>\n");
            for (Comparison.Entry e : group.getValue()) {
                int y = 5 + row++ * ROW_HEIGHT;
                Optional<Double> v = value.apply(e);
                int width = v.map(d -> max == 0 ? 0 : (int) Math.round(d / max * BAR_WIDTH)).orElse(0);
                String colour = "naive".equals(e.pattern()) ? "#b00020" : "#1565c0";
                svg.append("<text x=\"12\" y=\"").append(y + 15).append("\">").append(escape(e.name()))
                        .append("</text>");
                if (v.isPresent()) {
                    svg.append("<rect class=\"bar\" data-name=\"").append(escape(e.name()))
                            .append("\" data-workload=\"").append(escape(e.workload())).append("\" data-value=\"")
                            .append(fmt(v.get(), 3)).append("\" x=\"").append(LABEL_WIDTH).append("\" y=\"").append(y)
                            .append("\" width=\"").append(width).append("\" height=\"18\" fill=\"").append(colour)
                            .append("\"/><text x=\"").append(LABEL_WIDTH + width + 6).append("\" y=\"").append(y + 14)
                            .append("\">").append(String.format(Locale.ROOT, format, v.get())).append("</text>\n");
                } else {
                    svg.append("<text class=\"none\" x=\"").append(LABEL_WIDTH).append("\" y=\"").append(y + 14)
                            .append("\" fill=\"#666\">").append(escape(missing)).append("</text>\n");
                }
            }
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
