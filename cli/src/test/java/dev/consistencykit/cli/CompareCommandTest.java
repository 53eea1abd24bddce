package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.consistencykit.testkit.MongoTarget;

class CompareCommandTest {

    @Test
    void shouldRefuseAReportItCannotWriteBeforeRunningAnything(@TempDir Path dir) {
        CliTestSupport.Run run = CliTestSupport.run("--uri",
                MongoTarget.fromEnvironment().connectionString().getConnectionString(), "--json", "compare",
                "--seconds", "3", "--report", dir.resolve("missing").resolve("x.html").toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--report").contains("nothing was run");
        assertThat(run.out()).doesNotContain("naive (two plain updates)");
        assertThat(run.lastLineJson().getInteger("exitCode")).isEqualTo(2);
    }

    @Test
    void shouldCompareEveryPatternAndWriteAReportWithItsCharts(@TempDir Path dir) throws Exception {
        Path report = dir.resolve("compare.html");

        CliTestSupport.Run run = CliTestSupport.run("--uri",
                MongoTarget.fromEnvironment().connectionString().getConnectionString(), "--json", "compare",
                "--seconds", "1", "--report", report.toString());

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        List<Document> entries = run.lastLineJson().getList("entries", Document.class);
        assertThat(entries).extracting(e -> e.getString("name")).containsExactly("naive (two plain updates)",
                "two-phase (reserve then credit)", "two-phase (apply at prepare)", "log reconciliation",
                "job queue (transfer job)", "versioned documents", "sync flag", "job queue (rename job)");
        for (Document e : entries) {
            assertThat(e.keySet()).contains("opsPerSec", "roundTripsPerOp", "backgroundRoundTripsPerOp",
                    "rawReaderAnomalies", "patternReaderAnomalies", "violations", "anomalies", "note");
            assertThat(e.get("opsPerSec", Number.class).doubleValue()).as(e.getString("name")).isPositive();
            assertThat(e.getInteger("crashes")).as(e.getString("name")).isPositive();
            assertThat(e.getString("anomalies")).as(e.getString("name")).isNotBlank();
            if (!"naive".equals(e.getString("pattern"))) {
                assertThat(e.getInteger("violations")).as(e.toJson()).isZero();
                assertThat(e.get("recoverySeconds")).as(e.getString("name")).isNotNull();
            }
            boolean consistentRead = List.of("two-phase", "log-reconciliation", "versioning")
                    .contains(e.getString("pattern"));
            if (consistentRead) {
                assertThat(e.get("patternReaderAnomalies", Number.class).longValue()).as(e.toJson()).isZero();
            } else {
                assertThat(e.get("patternReaderAnomalies")).as(e.toJson()).isNull();
                assertThat(e.getString("note")).as(e.toJson()).contains("no consistent read: ");
            }
        }
        Document naive = entries.get(0);
        assertThat(naive.getInteger("violations") > 0
                || naive.getString("note").startsWith("no crash fell between its two writes"))
                .as("the naive loop shows its loss, or says no crash fell between its writes: " + naive.toJson())
                .isTrue();
        assertThat(naive.getString("note")).isNotBlank();
        Document ledger = entries.get(3);
        assertThat(ledger.get("roundTripsPerOp", Number.class).doubleValue()).as("an append, the committer behind")
                .isLessThanOrEqualTo(2.0);
        assertThat(ledger.get("backgroundRoundTripsPerOp", Number.class).doubleValue()).isPositive();
        assertThat(ledger.get("patternReads", Number.class).longValue()).as("balances() answers every time")
                .isPositive();
        Document versioned = entries.get(5);
        assertThat(versioned.get("patternReads", Number.class).longValue()).isPositive();

        String html = Files.readString(report, StandardCharsets.UTF_8);
        assertThat(html).contains("<table id=\"results\">");
        for (String chart : List.of("throughput-chart", "round-trips-chart", "raw-anomalies-chart",
                "pattern-anomalies-chart")) {
            String svg = svg(html, chart);
            assertThat(svg).as(chart + " is labelled by workload").contains("workload: bank-transfer")
                    .contains("workload: rename");
            assertThat(svg.indexOf("workload: bank-transfer")).isLessThan(svg.indexOf("workload: rename"));
        }
        List<Double> throughputBars = barValues(html, "throughput-chart");
        assertThat(throughputBars).hasSize(entries.size());
        assertThat(barValues(html, "raw-anomalies-chart")).hasSize(entries.size());
        assertThat(barValues(html, "pattern-anomalies-chart")).hasSize(4);   // two-phase x2, ledger, versioned
        assertThat(svg(html, "pattern-anomalies-chart")).contains("no consistent read");
        for (int i = 0; i < entries.size(); i++) {
            assertThat(throughputBars.get(i)).isCloseTo(entries.get(i).get("opsPerSec", Number.class).doubleValue(),
                    org.assertj.core.data.Offset.offset(0.01));
        }
        assertThat(html).contains("<dl id=\"meanings\">");
        for (Document e : entries) {
            assertThat(html).contains(com.google.common.html.HtmlEscapers.htmlEscaper().escape(e.getString("name")));
        }
        Matcher data = Pattern.compile("<script type=\"application/json\" id=\"compare-data\">(.*?)</script>",
                Pattern.DOTALL).matcher(html);
        assertThat(data.find()).isTrue();
        assertThat(Document.parse(data.group(1).replace("<\\/", "</")).getList("entries", Document.class))
                .hasSize(entries.size());
    }

    private static String svg(String html, String chartId) {
        int start = html.indexOf("<svg id=\"" + chartId + "\"");
        assertThat(start).as(chartId).isNotNegative();
        return html.substring(start, html.indexOf("</svg>", start));
    }

    private static List<Double> barValues(String html, String chartId) {
        String svg = svg(html, chartId);
        Matcher m = Pattern.compile("<rect class=\"bar\"[^>]*data-value=\"([0-9.]+)\"").matcher(svg);
        List<Double> values = new ArrayList<>();
        while (m.find()) {
            values.add(Double.parseDouble(m.group(1)));
        }
        return values;
    }

    @Test
    void shouldRefuseNonsenseSettings() {
        CliTestSupport.Run run = CliTestSupport.run("compare", "--crash-rate", "1.5");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--crash-rate in [0, 1)");
    }
}
