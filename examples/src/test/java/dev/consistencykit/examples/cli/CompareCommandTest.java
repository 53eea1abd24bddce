package dev.consistencykit.examples.cli;

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
            assertThat(e.keySet()).contains("opsPerSec", "roundTripsPerOp", "readerAnomalies", "violations");
            assertThat(e.get("opsPerSec", Number.class).doubleValue()).as(e.getString("name")).isPositive();
            assertThat(e.getInteger("crashes")).as(e.getString("name")).isPositive();
            if (!"naive".equals(e.getString("pattern"))) {
                assertThat(e.getInteger("violations")).as(e.toJson()).isZero();
                assertThat(e.get("recoverySeconds")).as(e.getString("name")).isNotNull();
            }
        }
        Document naive = entries.get(0);
        assertThat(naive.getInteger("violations")).as("the naive loop loses money when it crashes").isPositive();
        assertThat(naive.get("recoverySeconds")).isNull();
        Document versioned = entries.get(5);
        assertThat(versioned.getInteger("readerAnomalies")).as("versioned readers see whole versions").isZero();

        String html = Files.readString(report, StandardCharsets.UTF_8);
        assertThat(html).contains("<table id=\"results\">").contains("<svg id=\"throughput-chart\"")
                .contains("<svg id=\"anomalies-chart\"");
        List<Double> throughputBars = barValues(html, "throughput-chart");
        assertThat(barValues(html, "anomalies-chart")).hasSize(entries.size());
        assertThat(throughputBars).hasSize(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            assertThat(throughputBars.get(i)).isCloseTo(entries.get(i).get("opsPerSec", Number.class).doubleValue(),
                    org.assertj.core.data.Offset.offset(0.01));
        }
        Matcher data = Pattern.compile("<script type=\"application/json\" id=\"compare-data\">(.*?)</script>",
                Pattern.DOTALL).matcher(html);
        assertThat(data.find()).isTrue();
        assertThat(Document.parse(data.group(1).replace("<\\/", "</")).getList("entries", Document.class))
                .hasSize(entries.size());
    }

    private static List<Double> barValues(String html, String chartId) {
        int start = html.indexOf("<svg id=\"" + chartId + "\"");
        String svg = html.substring(start, html.indexOf("</svg>", start));
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
