package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The comparison report opened in a real headless browser (Debian's Chromium; skipped where it is not installed,
 * {@code apt-get install chromium}): the browser renders it to a screenshot, and the page as the browser built it has
 * every chart labelled by workload. {@code scripts/report-screenshot} does the same for a real run.
 */
class ReportInBrowserTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    private static Comparison.Entry entry(String name, String pattern, String workload, double opsPerSec,
                                          Long patternAnomalies) {
        return new Comparison.Entry(name, pattern, workload, 100, opsPerSec, 2, 0, 2, 1, 2, 3, 50, 5, 40,
                Optional.ofNullable(patternAnomalies), Optional.of(0.1), List.of(), "what its anomalies mean.",
                patternAnomalies == null ? "no consistent read: none offered" : "");
    }

    private static List<String> chromium(Path profile, String... args) {
        List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile, "--hide-scrollbars"));
        command.addAll(List.of(args));
        return command;
    }

    private static String run(List<String> command, Path stdout) throws Exception {
        Process p = new ProcessBuilder(command).redirectOutput(stdout.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        return Files.readString(stdout, StandardCharsets.UTF_8);
    }

    @Test
    void shouldRenderEveryChartLabelledByWorkloadInABrowser(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM), "Debian's chromium is not installed");
        Comparison.Result result = new Comparison.Result(List.of(
                entry("naive (two plain updates)", "naive", "bank-transfer", 900, null),
                entry("two-phase (reserve then credit)", "two-phase", "bank-transfer", 400, 0L),
                entry("sync flag", "sync-flag", "rename", 1000, null)), 3, false);
        Path report = dir.resolve("report.html");
        Files.writeString(report, CompareReport.html(result, "consistency-kit compare (test)"),
                StandardCharsets.UTF_8);
        Path png = dir.resolve("report.png");

        run(chromium(dir.resolve("profile-1"), "--window-size=1280,1800", "--screenshot=" + png,
                report.toUri().toString()), dir.resolve("screenshot.log"));
        String dom = run(chromium(dir.resolve("profile-2"), "--dump-dom", report.toUri().toString()),
                dir.resolve("dom.html"));

        assertThat(png).exists();
        assertThat(Files.size(png)).as("a rendered page, not a blank one").isGreaterThan(20_000);
        byte[] header = Files.readAllBytes(png);
        assertThat(new String(header, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
        for (String chart : List.of("throughput-chart", "round-trips-chart", "raw-anomalies-chart",
                "pattern-anomalies-chart")) {
            int start = dom.indexOf("<svg id=\"" + chart + "\"");
            assertThat(start).as(chart + " in the browser's page").isNotNegative();
            String svg = dom.substring(start, dom.indexOf("</svg>", start));
            assertThat(svg).contains("workload: bank-transfer").contains("workload: rename");
        }
    }
}
