package dev.consistencykit.cli.lab;

import org.bson.Document;

/**
 * What {@code bench <pattern>} measured, against raw single-document {@code updateOne}s measured in the same run with
 * the same concurrency.
 *
 * @param pattern         the pattern
 * @param threads         concurrent clients
 * @param operations      pattern operations measured
 * @param roundTripsPerOp commands sent per operation
 * @param writesPerOp     documents written per operation
 * @param opsPerSec       pattern operations per second
 * @param rawOpsPerSec    raw single-document updates per second
 * @param extra           pattern-specific measurements (for example read round trips)
 */
public record BenchReport(String pattern, int threads, long operations, double roundTripsPerOp, double writesPerOp,
                          double opsPerSec, double rawOpsPerSec, Document extra) {

    /** Pattern throughput over raw throughput. */
    public double ratio() {
        return rawOpsPerSec == 0 ? 0 : opsPerSec / rawOpsPerSec;
    }

    /** The JSON object the CLI prints. */
    public Document json() {
        Document d = new Document("pattern", pattern).append("roundTripsPerOp", round(roundTripsPerOp))
                .append("writesPerOp", round(writesPerOp)).append("opsPerSec", round(opsPerSec))
                .append("rawOpsPerSec", round(rawOpsPerSec)).append("ratio", round(ratio()))
                .append("threads", threads).append("operations", operations);
        d.putAll(extra);
        return d;
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }
}
