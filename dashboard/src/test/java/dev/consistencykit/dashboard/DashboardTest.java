package dev.consistencykit.dashboard;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/**
 * The dashboard's API on a database with finished, interrupted and dead operations: counts, pagination, one
 * operation opened as a reader sees it, actions refused without the token (and nothing changed), hostile input
 * refused before any read, and no token in any answer.
 */
@ExtendWith(MongoTestExtension.class)
class DashboardTest {

    static final String TOKEN = "a-token-of-the-test-0123456789";
    static final int DEAD_JOBS = 45;

    /** Five transfers done, {@code t-6} left with both accounts prepared; 45 dead jobs and one a dead worker holds. */
    static void seed(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 10_000L),
                new Document("_id", "bob").append("balance", 5_000L)));
        TwoPhaseCommit.on(db).ensureIndexes();
        for (int i = 1; i <= 5; i++) {
            TwoPhaseCommit.on(db).transfer(Transfer.of(OperationId.of("t-" + i), "alice", "bob", 100));
        }
        try {
            TwoPhaseCommit.on(FaultInjector.atWrite("bulkWrite", "accounts", 1, FaultMode.CRASH_AFTER).wrap(db))
                    .transfer(Transfer.of(OperationId.of("t-6"), "alice", "bob", 1_000));
            throw new AssertionError("the crash was not injected");
        } catch (InjectedCrash expected) {
            // t-6 is left pending
        }
        JobQueue queue = queue(db);
        queue.ensureIndexes();
        for (int i = 0; i < DEAD_JOBS; i++) {
            queue.apply(JobRequest.of("fail", new Document("n", i)).withId(OperationId.of(String.format("dead-%02d",
                    i))));
        }
        queue.enqueue(JobRequest.of("fail", new Document()).withId(OperationId.of("held")));
        try {
            JobQueue.builder(FaultInjector.atWrite("findOneAndUpdate", "jobs", 1, FaultMode.CRASH_AFTER).wrap(db))
                    .maxAttempts(1)
                    .handler("fail", job -> { }).build().processNext();
            throw new AssertionError("the crash was not injected");
        } catch (InjectedCrash expected) {
            // 'held' is processing, its worker gone
        }
    }

    static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).maxAttempts(1).handler("fail", job -> {
            throw new IllegalStateException("boom <script>alert(1)</script>");
        }).build();
    }

    private static Dashboard dashboard(MongoDatabase db, boolean actions) {
        return Dashboard.of(db, new DashboardSettings().actionsEnabled(actions).token(actions ? TOKEN : null)
                .staleAfter(Duration.ZERO));
    }

    private final List<String> answers = new ArrayList<>();

    private Document call(Dashboard dashboard, String method, String path, Map<String, String> query, String token,
                          int expectedStatus) {
        DashboardResponse r = dashboard.handle(new DashboardRequest(method, path, query, token));
        answers.add(r.text());
        assertThat(r.status()).as(method + " " + path + ": " + r.text()).isEqualTo(expectedStatus);
        assertThat(r.contentType()).startsWith("application/json");
        return Document.parse(r.text());
    }

    private Document get(Dashboard dashboard, String path, Map<String, String> query) {
        return call(dashboard, "GET", path, query, null, 200);
    }

    private static Document instance(Document overview, String key) {
        return overview.getList("instances", Document.class).stream().filter(i -> i.getString("key").equals(key))
                .findFirst().orElseThrow();
    }

    @Test
    void shouldCountEveryInstancesUnfinishedOperationsByState(MongoDatabase db) {
        seed(db);
        Document overview = get(dashboard(db, false), "/api/overview", Map.of());

        assertThat(overview.getString("database")).isEqualTo(db.getName());
        assertThat(overview.getBoolean("actions")).isFalse();
        Document tpc = instance(overview, "two-phase/two-phase");
        assertThat(tpc.get("byState", Document.class)).isEqualTo(new Document("pending", 1));
        assertThat(tpc.get("interrupted")).isEqualTo(1);
        assertThat(tpc.get("finishedLastMinute")).isEqualTo(5);
        assertThat(tpc.getList("setupProblems", String.class)).isEmpty();
        Document jobs = instance(overview, "job-queue/job-queue");
        assertThat(jobs.get("byState", Document.class)).as("a dead job is not unfinished")
                .isEqualTo(new Document("processing", 1));
        assertThat(jobs.get("dead", Number.class).longValue()).as("counted once, as dead").isEqualTo(DEAD_JOBS);
        assertThat(jobs.getBoolean("jobQueue")).isTrue();
        assertThat(overview.getList("series", Document.class)).hasSize(1);
    }

    @Test
    void shouldPageUnfinishedOperationsAndDeadJobsOldestFirst(MongoDatabase db) {
        seed(db);
        Dashboard dashboard = dashboard(db, false);
        String ops = "/api/instances/job-queue/job-queue/operations";
        Document first = get(dashboard, ops, Map.of("limit", "20"));
        Document second = get(dashboard, ops, Map.of("offset", "20", "limit", "20"));
        Document third = get(dashboard, ops, Map.of("offset", "40", "limit", "20"));

        assertThat(first.getList("operations", Document.class)).hasSize(20);
        assertThat(first.getList("operations", Document.class).get(0).getString("state")).isEqualTo("processing");
        assertThat(first.getBoolean("more")).isTrue();
        assertThat(second.getList("operations", Document.class)).hasSize(20);
        assertThat(third.getList("operations", Document.class)).hasSize(DEAD_JOBS + 1 - 40);
        assertThat(third.getBoolean("more")).isFalse();
        List<Object> ids = new ArrayList<>();
        for (Document page : List.of(first, second, third)) {
            page.getList("operations", Document.class).forEach(o -> ids.add(o.get("id")));
        }
        assertThat(ids).doesNotHaveDuplicates().hasSize(DEAD_JOBS + 1);

        String dead = "/api/instances/job-queue/job-queue/dead";
        Document deadPage = get(dashboard, dead, Map.of("offset", "40", "limit", "10"));
        assertThat(deadPage.getList("dead", Document.class)).hasSize(DEAD_JOBS - 40);
        assertThat(deadPage.getList("dead", Document.class).get(0).getString("detail"))
                .contains("boom <script>alert(1)</script>");

        call(dashboard, "GET", ops, Map.of("offset", "990", "limit", "20"), null, 400);
        call(dashboard, "GET", ops, Map.of("limit", "0"), null, 400);
        call(dashboard, "GET", ops, Map.of("limit", "101"), null, 400);
        call(dashboard, "GET", ops, Map.of("limit", "ten"), null, 400);
        call(dashboard, "GET", "/api/instances/two-phase/two-phase/dead", Map.of(), null, 404);
    }

    @Test
    void shouldOpenAnOperationWithItsDocumentsAsAReaderSeesThem(MongoDatabase db) {
        seed(db);
        Document view = get(dashboard(db, false), "/api/instances/two-phase/two-phase/operations/%22t-6%22",
                Map.of());

        assertThat(view.getString("state")).isEqualTo("pending");
        assertThat(view.get("record", Document.class).getString("_id")).isEqualTo("t-6");
        List<Document> documents = view.getList("documents", Document.class);
        assertThat(documents).extracting(d -> d.get("id")).containsExactly("alice", "bob");
        // t-6 is undecided: a reader sees the balances as if it had not run, its reservation on alice undone
        assertThat(documents.get(0).get("asReaderSees", Document.class).get("balance", Number.class).longValue())
                .isEqualTo(10_000L - 500);
        assertThat(documents.get(1).get("asReaderSees", Document.class).get("balance", Number.class).longValue())
                .isEqualTo(5_000L + 500);

        call(dashboard(db, false), "GET", "/api/instances/two-phase/two-phase/operations/%22nope%22", Map.of(), null,
                404);
    }

    @Test
    void shouldRefuseEveryActionWithoutTheTokenAndChangeNothing(MongoDatabase db) {
        seed(db);
        DatabaseSnapshot before = DatabaseSnapshot.of(db);
        String recoverOne = "/api/instances/two-phase/two-phase/operations/%22t-6%22/recover";
        String recoverAll = "/api/instances/two-phase/two-phase/recover";
        String replay = "/api/instances/job-queue/job-queue/dead/%22dead-00%22/replay";

        Dashboard readOnly = dashboard(db, false);
        for (String path : List.of(recoverOne, recoverAll, replay)) {
            call(readOnly, "POST", path, Map.of(), TOKEN, 403);
        }
        Dashboard withActions = dashboard(db, true);
        for (String path : List.of(recoverOne, recoverAll, replay)) {
            call(withActions, "POST", path, Map.of(), null, 401);
            call(withActions, "POST", path, Map.of(), TOKEN.substring(1), 401);
            call(withActions, "POST", path, Map.of(), TOKEN + "x", 401);
            call(withActions, "GET", path, Map.of(), TOKEN, 404);
        }
        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRecoverOneOperationAndReplayADeadJobWithTheToken(MongoDatabase db) {
        seed(db);
        Dashboard dashboard = dashboard(db, true);
        Document report = call(dashboard, "POST", "/api/instances/two-phase/two-phase/operations/%22t-6%22/recover",
                Map.of(), TOKEN, 200);

        assertThat(report.getInteger("examined")).isEqualTo(1);
        assertThat(report.getInteger("rolledBack")).isEqualTo(1);
        assertThat(db.getCollection("transactions").find(eq("_id", "t-6")).first().getString("state"))
                .isEqualTo("canceled");
        long total = 0;
        for (Document a : db.getCollection("accounts").find()) {
            total += a.getLong("balance");
        }
        assertThat(total).isEqualTo(15_000L);

        Document replayed = call(dashboard, "POST", "/api/instances/job-queue/job-queue/dead/%22dead-07%22/replay",
                Map.of(), TOKEN, 200);
        assertThat(replayed.getBoolean("replayed")).isTrue();
        assertThat(db.getCollection("jobs").find(eq("_id", "dead-07")).first().getString("state")).isEqualTo("todo");

        Document requeued = call(dashboard, "POST", "/api/instances/job-queue/job-queue/recover", Map.of(), TOKEN,
                200);
        // 'held' was on its last attempt: the sweep killed it, and the report says so rather than call it requeued
        assertThat(requeued.getInteger("rolledBack")).as("nothing requeued").isZero();
        assertThat(requeued.getInteger("setAside")).as("the job its dead worker held, dead on its last attempt")
                .isEqualTo(1);
        Document overview = get(dashboard, "/api/overview", Map.of());
        assertThat(instance(overview, "two-phase/two-phase").get("unfinished")).isEqualTo(0);
        Document sample = overview.getList("series", Document.class).get(0);
        assertThat(sample.get("repairedFromPage")).as("t-6; a killed job is not repaired").isEqualTo(1);
        assertThat(sample.get("recovered")).as("the instances' own count: t-6 undone").isEqualTo(1);
    }

    /**
     * A live job by its id as printed anywhere (bare hex for a job enqueued without an id of its own): opened, then
     * rescheduled, cancelled and rerun from the page, each once; an action on no such job is a 404 that changes
     * nothing, and none goes without the token.
     */
    @Test
    void shouldOpenRescheduleCancelAndRerunALiveJobByItsPrintedId(MongoDatabase db) {
        seed(db);
        JobQueue queue = queue(db);
        OperationId waiting = queue.enqueue(JobRequest.of("fail", new Document("n", "live")));
        String printed = waiting.toString();   // 24 hex digits, as the logs, inspect and the CLI print it
        String base = "/api/instances/job-queue/job-queue/";
        Dashboard dashboard = dashboard(db, true);

        Document view = get(dashboard, base + "operations/" + printed, Map.of());
        assertThat(view.get("record", Document.class).get("_id")).isEqualTo(waiting.value());

        call(dashboard, "POST", base + "jobs/" + printed + "/reschedule", Map.of("at", "2099-01-01T00:00:00Z"), null,
                401);
        call(dashboard, "POST", base + "jobs/" + printed + "/reschedule", Map.of("at", "tomorrow"), TOKEN, 400);
        call(dashboard, "POST", base + "jobs/" + printed + "/reschedule", Map.of(), TOKEN, 400);
        call(dashboard, "POST", base + "jobs/" + printed + "/reschedule", Map.of("at", "2099-01-01T00:00:00Z"),
                TOKEN, 200);
        assertThat(db.getCollection("jobs").find(eq("_id", waiting.value())).first().getDate("runAt").toInstant())
                .isEqualTo(java.time.Instant.parse("2099-01-01T00:00:00Z"));

        Document canceled = call(dashboard, "POST", base + "jobs/" + printed + "/cancel", Map.of(), TOKEN, 200);
        assertThat(canceled.getBoolean("done")).isTrue();
        DatabaseSnapshot afterCancel = DatabaseSnapshot.of(db);
        call(dashboard, "POST", base + "jobs/" + printed + "/cancel", Map.of(), TOKEN, 404);
        call(dashboard, "POST", base + "jobs/%22no-such-job%22/rerun", Map.of(), TOKEN, 404);
        call(dashboard, "POST", base + "jobs/" + printed + "/explode", Map.of(), TOKEN, 404);
        assertThat(DatabaseSnapshot.of(db)).isEqualTo(afterCancel);

        Document rerun = call(dashboard, "POST", base + "jobs/%22dead-03%22/rerun", Map.of(), TOKEN, 200);
        Object again = rerun.get("job");
        assertThat(db.getCollection("jobs").find(eq("_id", again)).first().getString("state")).isEqualTo("todo");
        assertThat(db.getCollection("jobs").find(eq("_id", "dead-03")).first().getString("state")).isEqualTo("dead");
    }

    /** The workers view: each worker with the jobs it holds, through the index of running jobs, bounded. */
    @Test
    void shouldShowEachWorkerWithTheJobsItHolds(MongoDatabase db) {
        seed(db);
        Document workers = get(dashboard(db, false), "/api/instances/job-queue/job-queue/workers", Map.of());

        List<Document> list = workers.getList("workers", Document.class);
        assertThat(list).hasSize(1);
        assertThat(list.get(0).getString("owner")).isEqualTo(db.getCollection("jobs").find(eq("_id", "held")).first()
                .getString("owner"));
        assertThat(list.get(0).getList("jobs", Document.class)).extracting(j -> j.get("id"), j -> j.get("type"))
                .containsExactly(org.assertj.core.groups.Tuple.tuple("held", "fail"));
        assertThat(list.get(0).getDouble("leaseLeftSeconds")).as("its lease, not yet run out").isPositive();
        assertThat(workers.getInteger("runningJobs")).isEqualTo(1);
        call(dashboard(db, false), "GET", "/api/instances/two-phase/two-phase/workers", Map.of(), null, 404);
    }

    @Test
    void shouldFindJobsInEveryStateByIdTypeStateAndTime(MongoDatabase db) {
        seed(db);
        Dashboard dashboard = dashboard(db, false);
        String path = "/api/instances/job-queue/job-queue/jobs";

        List<Document> all = get(dashboard, path, Map.of("type", "fail", "limit", "100")).getList("jobs",
                Document.class);
        assertThat(all).hasSize(DEAD_JOBS + 1);
        assertThat(all).extracting(d -> d.getString("state")).containsOnly("dead", "processing");
        assertThat(get(dashboard, path, Map.of("state", "processing")).getList("jobs", Document.class))
                .extracting(d -> d.get("id")).containsExactly("held");
        assertThat(get(dashboard, path, Map.of("state", "dead,processing", "limit", "3")).getList("jobs",
                Document.class)).hasSize(3);
        Document one = get(dashboard, path, Map.of("id", "dead-03")).getList("jobs", Document.class).get(0);
        assertThat(one.getString("lastError")).contains("boom");
        assertThat(one.getString("enqueuedAt")).isNotBlank();
        assertThat(get(dashboard, path, Map.of("from", "2999-01-01T00:00:00Z")).getList("jobs", Document.class))
                .isEmpty();
        assertThat(get(dashboard, path, Map.of("type", "{\"$ne\": 1}")).getList("jobs", Document.class)).isEmpty();
        assertThat(call(dashboard, "GET", path, Map.of("state", "sleeping"), null, 400).getString("error"))
                .contains("unknown job state: sleeping");
        call(dashboard, "GET", path, Map.of("from", "yesterday"), null, 400);
        call(dashboard, "GET", path, Map.of("limit", "101"), null, 400);
        call(dashboard, "GET", "/api/instances/two-phase/two-phase/jobs", Map.of(), null, 404);
    }

    @Test
    void shouldRefuseHostileInputBeforeAnyRead(MongoDatabase db) {
        seed(db);
        Dashboard dashboard = dashboard(db, true);
        DatabaseSnapshot before = DatabaseSnapshot.of(db);
        String base = "/api/instances/two-phase/two-phase/operations/";
        for (String id : List.of("%7B%22%24gt%22%3A%22%22%7D", "%5B1%5D", "null", "%22t-6%22%7D%2C%22x%22%3A%7B",
                "%7B%22%24where%22%3A%221%22%7D")) {
            Document answer = call(dashboard, "GET", base + id, Map.of(), null, 400);
            assertThat(answer.getString("error")).isNotBlank();
            call(dashboard, "POST", base + id + "/recover", Map.of(), TOKEN, 400);
        }
        // text that is not JSON is a string id as an operator types it: looked up as that string, never as a pattern
        for (String id : List.of("%2Fregex%2F", "not-json", "%24where")) {
            assertThat(call(dashboard, "GET", base + id, Map.of(), null, 404).getString("error")).contains("no operation");
        }
        assertThat(call(dashboard, "GET", base + "t-6", Map.of(), null, 200).getString("state")).isEqualTo("pending");
        call(dashboard, "POST", "/api/instances/job-queue/job-queue/dead/replay", Map.of(), TOKEN, 400);
        call(dashboard, "GET", "/api/instances/two-phase/%24where/operations", Map.of(), null, 404);
        call(dashboard, "GET", "/api/instances/two-phase", Map.of(), null, 404);
        call(dashboard, "GET", "/api/nothing", Map.of(), null, 404);
        call(dashboard, "DELETE", "/api/overview", Map.of(), TOKEN, 405);
        call(dashboard, "GET", "/api/" + "x".repeat(5_000), Map.of(), null, 414);
        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
        assertThat(answers).noneMatch(a -> a.contains(TOKEN));
    }

    @Test
    void shouldNeverAnswerWithTheTokenOrAConnectionString(MongoDatabase db) {
        seed(db);
        Dashboard dashboard = dashboard(db, true);
        get(dashboard, "/api/overview", Map.of());
        get(dashboard, "/api/instances/two-phase/two-phase/operations", Map.of());
        get(dashboard, "/api/instances/two-phase/two-phase/status", Map.of());
        get(dashboard, "/api/instances/two-phase/two-phase/operations/%22t-6%22", Map.of());
        get(dashboard, "/api/instances/job-queue/job-queue/dead", Map.of());
        call(dashboard, "POST", "/api/instances/two-phase/two-phase/recover", Map.of(), TOKEN, 200);

        assertThat(answers).hasSize(6).noneMatch(a -> a.contains(TOKEN)).noneMatch(a -> a.contains("mongodb://"));
        assertThat(dashboard.handle(new DashboardRequest("GET", "/", Map.of(), null)).text())
                .doesNotContain(TOKEN).contains("dashboard.js");
    }

    @Test
    void shouldAnswerATypedErrorInBoundedTimeWhenTheServerIsGone() throws Exception {
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (com.mongodb.client.MongoClient gone = com.mongodb.client.MongoClients.create("mongodb://127.0.0.1:"
                + closedPort + "/?serverSelectionTimeoutMS=300&connectTimeoutMS=300")) {
            Dashboard dashboard = Dashboard.of(gone.getDatabase("shop"), new DashboardSettings());
            DashboardResponse answer = dashboard.handle(new DashboardRequest("GET", "/api/overview", Map.of(), null));

            assertThat(answer.status()).isEqualTo(503);
            assertThat(Document.parse(answer.text()).getString("error")).isNotBlank().doesNotContain("Exception:");
        }
    }

    @Test
    void shouldRefuseActionsWithoutATokenOrWithAShortOne() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Dashboard("db", List::of,
                new DashboardSettings().actionsEnabled(true))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("need a token");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DashboardSettings().token("short"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
