package dev.consistencykit.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import dev.consistencykit.testkit.MongoTarget;

/** The chaos and bench commands' contract; performance targets are checked by running bench, not here. */
class LabCommandsTest {

    private static String targetUri() {
        return MongoTarget.fromEnvironment().connectionString().getConnectionString();
    }

    @Test
    void shouldSayWhereABenchWasMeasured() {
        CliTestSupport.Run run = CliTestSupport.run("bench", "versioning", "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).containsPattern("measured on \\d+ CPU\\(s\\), load average (\\d+\\.\\d\\d|unknown) over the"
                + " last minute; server: the embedded server, in this process");
    }

    @Test
    void shouldReportScenariosSeedsAndNoViolationsWhenChaosRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "chaos", "two-phase",
                "--seeds", "5");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getString("pattern")).isEqualTo("two-phase");
        assertThat(json.getInteger("writeSites")).isEqualTo(6);
        assertThat(json.getInteger("scenarios")).isGreaterThanOrEqualTo(60);
        assertThat(json.getInteger("interleavings")).as("schedules of the interleaving explorer").isGreaterThanOrEqualTo(200);
        assertThat(json.getInteger("seeds")).isEqualTo(5);
        assertThat(((Number) json.get("operations")).longValue()).isEqualTo(5 * 8 * 3);
        assertThat(json.getInteger("violations")).isZero();
    }

    @Test
    void shouldReportRoundTripsAndRawBaselineWhenBenchRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "two-phase",
                "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.keySet()).contains("pattern", "roundTripsPerOp", "writesPerOp", "opsPerSec", "rawOpsPerSec",
                "ratio");
        // 7 per transfer, and one write per 64 records releasing them
        assertRoundTripsPerOp(json, 7);
        assertThat(json.getDouble("opsPerSec")).isPositive();
        assertThat(json.getDouble("rawOpsPerSec")).isPositive();
        assertThat(json.getDouble("ratio")).isCloseTo(json.getDouble("opsPerSec") / json.getDouble("rawOpsPerSec"),
                org.assertj.core.data.Offset.offset(0.002));
    }

    @Test
    void shouldReportScenariosAndNoViolationsWhenJobQueueChaosRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "chaos", "job-queue",
                "--seeds", "3");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getString("pattern")).isEqualTo("job-queue");
        assertThat(json.getInteger("writeSites")).isEqualTo(11);
        assertThat(json.getInteger("scenarios")).isGreaterThanOrEqualTo(30);
        assertThat(json.getInteger("interleavings")).as("schedules of the interleaving explorer").isGreaterThanOrEqualTo(200);
        assertThat(json.getInteger("violations")).isZero();
    }

    @Test
    void shouldReportTheHotDocumentsSizeAndBothTenthsWhenHotBenchRuns() {
        for (String pattern : new String[] {"two-phase", "job-queue"}) {
            CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", pattern, "--hot",
                    "--operations", "300");

            assertThat(run.exitCode()).as(run.err()).isZero();
            Document json = run.lastLineJson();
            assertThat(json.getString("pattern")).isEqualTo(pattern);
            assertThat(json.keySet()).contains("roundTripsPerOp", "opsPerSec", "rawOpsPerSec", "ratio",
                    "hotDocumentBytesStart", "hotDocumentBytesEnd", "opsPerSecFirstTenth", "opsPerSecLastTenth");
            assertThat(((Number) json.get("operations")).longValue()).isEqualTo(300);
            long growth = ((Number) json.get("hotDocumentBytesEnd")).longValue()
                    - ((Number) json.get("hotDocumentBytesStart")).longValue();
            assertThat(growth).as(pattern + " hot document growth").isLessThanOrEqualTo(2_048);
            assertThat(json.getDouble("opsPerSecLastTenth")).isPositive();
        }
    }

    @Test
    void shouldRefuseHotBenchForAPatternWithoutOne() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "sync-flag", "--hot");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("no --hot benchmark");
    }

    @Test
    void shouldCountThreeRoundTripsPerJobWhenJobQueueBenchRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "job-queue",
                "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        // 3 per job, and one write per 64 jobs releasing their records
        assertRoundTripsPerOp(run.lastLineJson(), 3);
    }

    @Test
    void shouldReportScenariosAndNoViolationsWhenSyncFlagChaosRuns() {
        // the text summary: every figure the JSON line has, interleavings included
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "chaos", "sync-flag", "--seeds", "3");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("sync-flag on .*: 4 write sites, (\\d+) crash"
                + " scenarios, (\\d+) interleavings, 3 chaos seeds \\(\\d+ operations, \\d+ crashes, \\d+ faults\\): 0"
                + " violations").matcher(run.out());
        assertThat(m.find()).as(run.out()).isTrue();
        assertThat(Integer.parseInt(m.group(1))).isGreaterThanOrEqualTo(20);
        assertThat(Integer.parseInt(m.group(2))).as("schedules of the interleaving explorer")
                .isGreaterThanOrEqualTo(200);
    }

    @Test
    void shouldCountTwoRoundTripsPlusOnePerTargetWhenSyncFlagBenchRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "sync-flag",
                "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getDouble("roundTripsPerOp")).isEqualTo(3.0);
        assertThat(json.get("flagsLeft", Number.class).longValue()).isZero();
        assertThat(json.getDouble("ratio")).isPositive();
    }

    @Test
    void shouldReportScenariosAndNoViolationsWhenLedgerChaosRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "chaos", "log-reconciliation",
                "--seeds", "3");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getString("pattern")).isEqualTo("log-reconciliation");
        assertThat(json.getInteger("scenarios")).isGreaterThanOrEqualTo(20);
        assertThat(json.getInteger("interleavings")).as("schedules of the interleaving explorer").isGreaterThanOrEqualTo(200);
        assertThat(json.getInteger("violations")).isZero();
    }

    @Test
    void shouldAppendInAboutOneRoundTripAndReportCommitsWhenLedgerBenchRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "log-reconciliation",
                "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getDouble("roundTripsPerOp")).isBetween(1.0, 1.5);
        assertThat(json.getDouble("balanceRoundTrips")).as("the cache, later changes, the cache again").isEqualTo(3.0);
        assertThat(json.get("commitsPerSec", Number.class).doubleValue()).isPositive();
    }

    @Test
    void shouldReserveANumberPerAccountWhenLedgerBenchRunsTheCounterVariant() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "log-reconciliation",
                "--variant", "counter", "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getString("seqAllocation")).isEqualTo("COUNTER");
        // a reservation per account of the transfer, then the insert (and a write per 64 releasing their records)
        assertRoundTripsPerOp(json, 3);
    }

    @Test
    void shouldRefuseAVariantThePatternDoesNotHave() {
        CliTestSupport.Run ledger = CliTestSupport.run("bench", "log-reconciliation", "--variant", "hash");
        CliTestSupport.Run twoPhase = CliTestSupport.run("bench", "two-phase", "--variant", "counter");

        assertThat(ledger.exitCode()).isEqualTo(2);
        assertThat(ledger.err()).contains("has the variants query, counter, not hash");
        assertThat(twoPhase.exitCode()).isEqualTo(2);
        assertThat(twoPhase.err()).contains("two-phase has no --variant");
    }

    @Test
    void shouldExplainEveryQueryShapeTheBenchSentAndDropItsDatabase() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "log-reconciliation",
                "--seconds", "1", "--plans");
        CliTestSupport.Run hot = CliTestSupport.run("bench", "two-phase", "--plans", "--hot");

        assertThat(run.exitCode()).as(run.err()).isZero();
        List<Document> plans = run.lastLineJson().getList("plans", Document.class);
        assertThat(plans).extracting(p -> p.getString("query"))
                .contains("find {$and: [{changes.account: string}, {changes: {$elemMatch: {$and: [{account:"
                        + " string}, {seqId: {$gt: int64}}]}}}]}")
                .noneMatch(q -> q.contains(dev.consistencykit.testkit.QueryPlans.RAW_FIELD));
        assertThat(plans).allSatisfy(p -> assertThat(((Number) p.get("sent")).longValue()).isPositive())
                .noneMatch(p -> p.getBoolean("wholeCollection"));
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(targetUri())) {
            assertThat(client.listDatabaseNames().into(new java.util.ArrayList<>()))
                    .noneMatch(name -> name.startsWith("ck_benchledger"));
        }
        assertThat(hot.exitCode()).isEqualTo(2);
        assertThat(hot.err()).contains("--plans explains the uncontended benchmark, not --hot");
    }

    @Test
    void shouldRefuseToShardWhereTheServerCannotAndWithHot() {
        CliTestSupport.Run embedded = CliTestSupport.run("bench", "two-phase", "--shard", "--seconds", "1");
        CliTestSupport.Run hot = CliTestSupport.run("bench", "two-phase", "--shard", "--hot");

        assertThat(embedded.exitCode()).isEqualTo(2);
        assertThat(embedded.err()).contains("--shard:").contains("no sharded cluster");
        assertThat(hot.exitCode()).isEqualTo(2);
        assertThat(hot.err()).contains("--shard measures the uncontended benchmark, not --hot");
    }

    @Test
    void shouldReportScenariosAndNoViolationsWhenVersioningChaosRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "chaos", "versioning",
                "--seeds", "3");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getString("pattern")).isEqualTo("versioning");
        assertThat(json.getInteger("writeSites")).isEqualTo(3);
        assertThat(json.getInteger("scenarios")).isGreaterThanOrEqualTo(20);
        // three operations × their calls (the read, the writes: 11 in all; no index check before the first write, as
        // the store rests on no unique index) × before and after each call × six actors: 132 (168 while the history's
        // unique index was checked, 204 while the item versions' was too)
        assertThat(json.getInteger("interleavings")).as("schedules of the interleaving explorer").isGreaterThanOrEqualTo(132);
        assertThat(json.getInteger("violations")).isZero();
    }

    @Test
    void shouldCommitInThreeRoundTripsAndReadInOneWhenVersioningBenchRuns() {
        CliTestSupport.Run run = CliTestSupport.run("--uri", targetUri(), "--json", "bench", "versioning",
                "--seconds", "1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Document json = run.lastLineJson();
        assertThat(json.getDouble("roundTripsPerOp")).isEqualTo(3.0);
        assertThat(json.getDouble("readRoundTrips")).as("one aggregation").isEqualTo(1.0);
        assertThat(json.getDouble("ratio")).isPositive();
    }

    @Test
    void shouldRejectUnknownPatternWithTheKnownOnes() {
        CliTestSupport.Run run = CliTestSupport.run("chaos", "three-phase");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("unknown pattern 'three-phase'").contains("two-phase").contains("job-queue")
                .contains("sync-flag").contains("versioning");
    }

    /**
     * A bench's round trips per operation: {@code perOperation}, plus one write per 64 records releasing them
     * (RecordReleases). A batch begun before the measured window and the partial one flushed at its end add at most
     * two writes to the operations measured, which weigh more the fewer operations a loaded machine measured in its
     * second, and the figure is rounded to three decimals.
     */
    private static void assertRoundTripsPerOp(Document json, int perOperation) {
        long operations = ((Number) json.get("operations")).longValue();
        assertThat(operations).isPositive();
        assertThat(json.getDouble("roundTripsPerOp")).isBetween((double) perOperation,
                perOperation + 1.0 / 64 + 2.0 / operations + 0.0005);
    }
}
