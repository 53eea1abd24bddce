package dev.consistencykit.cli;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardHttpServer;
import dev.consistencykit.dashboard.DashboardSettings;
import dev.consistencykit.cli.lab.DashboardDemo;
import dev.consistencykit.testkit.IndexCoverage;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.ReadBounds;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The dashboard as an operator sees it, in a real browser (Debian's Chromium, headless, driven over the DevTools
 * protocol; skipped only where it is not installed): on a database with every pattern in every state
 * ({@link DashboardDemo}), the page shows each instance and its unfinished operations, the dead job with its error as
 * text (its hostile markup inert), an operation's record and its documents as a reader sees them, the checks and every
 * state's counts on request; and the page's recover button repairs the interrupted transfer, every cent accounted for.
 * Every read behind the page's polls is indexed and bounded.
 */
@ExtendWith(MongoTestExtension.class)
class DashboardInBrowserTest {

    private static final String TOKEN = "the-browser-test-token-0123456789";

    private static String row(String key) {
        return "document.querySelector('#instances tr[data-key=\"" + key + "\"]')";
    }

    @Test
    void shouldShowEveryStateAndRecoverAnInterruptedTransferFromThePage(MongoTarget target, MongoDatabase db,
                                                                        @TempDir Path dir) throws Exception {
        assumeTrue(HeadlessChromium.installed(), "Debian's chromium is not installed");
        DashboardDemo.populate(db);
        Dashboard dashboard = Dashboard.of(db, new DashboardSettings().actionsEnabled(true).token(TOKEN)
                .staleAfter(Duration.ZERO).refreshEvery(Duration.ofMillis(500)));
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HeadlessChromium browser = HeadlessChromium.start(dir.resolve("profile"), 1280, 1800)) {
            IndexCoverage coverage = IndexCoverage.attach(target, db.getName());
            ReadBounds bounds = ReadBounds.attach(target, db.getName());
            browser.navigate(server.uri() + "#token=" + TOKEN);
            browser.waitFor("window.dashboard && window.dashboard.refreshes >= 2", "two refreshes");

            // every instance, its unfinished operations by state
            assertThat(browser.evaluate("document.querySelectorAll('#instances tbody tr').length").asNumber()
                    .intValue()).isEqualTo(5);
            assertThat(browser.text(row("two-phase/two-phase") + ".querySelector('.states').textContent"))
                    .isEqualTo("pending 1");
            assertThat(browser.text(row("job-queue/job-queue") + ".querySelector('.states').textContent"))
                    .isEqualTo("processing 1");
            assertThat(browser.text(row("job-queue/job-queue") + ".querySelector('.dead').textContent"))
                    .as("a dead job counted once, as dead").isEqualTo("1");
            assertThat(browser.text(row("sync-flag/sync-flag") + ".querySelector('.states').textContent"))
                    .isEqualTo("flagged 1");
            assertThat(browser.text(row("log-reconciliation/log-reconciliation")
                    + ".querySelector('.states').textContent")).isEqualTo("uncommitted 1");
            assertThat(browser.text(row("versioning/versioning") + ".querySelector('.states').textContent"))
                    .isEqualTo("staged 1");
            assertThat(browser.text("document.getElementById('mode').textContent")).isEqualTo("actions on");
            assertThat(browser.text("location.href")).as("the token leaves the address bar").doesNotContain(TOKEN);

            // the dead job's error, shown as text: its markup never became an element
            browser.evaluate(row("job-queue/job-queue") + ".querySelector('button').click()");
            browser.waitFor("document.querySelector('#dead tbody tr[data-id]')", "the dead job");
            assertThat(browser.text("document.querySelector('#dead tbody tr[data-id] .error-text').textContent"))
                    .contains("card declined <img src=x onerror=");
            assertThat(browser.evaluate("document.querySelectorAll('img').length").asNumber().intValue()).isZero();
            assertThat(browser.text("document.title")).isEqualTo("consistency-kit dashboard");

            // what the polls so far cost: indexed, bounded reads, no write
            coverage.close();
            bounds.close();
            assertThat(bounds.captured()).isGreaterThan(20);
            // the registries hold one document per instance, read whole (with a limit) when the page starts
            assertThat(coverage.uncovered(db)).allMatch(u -> u.startsWith("consistencyKitRegistry: {}")
                    || u.startsWith("syncFlagRegistry: {}"));
            assertThat(bounds.unbounded(Set.of())).isEmpty();

            // the checks and every state's counts, on request
            browser.evaluate(row("sync-flag/sync-flag") + ".querySelector('button').click()");
            browser.waitFor("!document.getElementById('run-checks').hidden", "the sync flag's checks button");
            browser.evaluate("document.getElementById('run-checks').click()");
            browser.waitFor("document.getElementById('checks').textContent.includes('stale copies')", "the checks");
            assertThat(browser.text("document.getElementById('checks').textContent"))
                    .contains("2 document(s) of invoices hold stale copies of master ann");
            browser.evaluate(row("log-reconciliation/log-reconciliation") + ".querySelector('button').click()");
            browser.waitFor("document.getElementById('instance-title').textContent.startsWith('log-reconciliation')",
                    "the ledger");
            browser.evaluate("document.getElementById('run-checks').click()");
            browser.waitFor("document.getElementById('checks').textContent.includes('ledger:')", "the ledger's checks");
            assertThat(browser.text("document.getElementById('checks').textContent")).contains("0 problem(s)");
            browser.evaluate("document.getElementById('count-states').click()");
            browser.waitFor("document.getElementById('states').textContent.includes('every state')", "the counts");

            // the interrupted transfer: its record, its accounts as a reader sees them, then recovered from the page
            browser.evaluate(row("two-phase/two-phase") + ".querySelector('button').click()");
            browser.waitFor("document.querySelector('#operations tbody tr[data-id] td')?.textContent === '"
                    + DashboardDemo.INTERRUPTED_TRANSFER + "'", "the interrupted transfer");
            browser.evaluate("document.querySelector('#operations tbody tr[data-id] button').click()");
            browser.waitFor("!document.getElementById('operation').hidden", "the opened operation");
            assertThat(browser.text("document.getElementById('operation-title').textContent"))
                    .isEqualTo("operation t-6 · pending");
            assertThat(browser.text("document.getElementById('operation-record').textContent"))
                    .contains("\"state\": \"pending\"");
            String documents = browser.text("document.getElementById('operation-documents').textContent");
            assertThat(documents).contains("accounts · alice").contains("accounts · bob")
                    .contains("as readConsistent shows it");
            browser.evaluate("document.getElementById('recover-operation').click()");
            browser.waitFor("document.getElementById('message').textContent.startsWith('recovery of two-phase')",
                    "the recovery's report");
            assertThat(browser.text("document.getElementById('message').textContent"))
                    .contains("examined 1").contains("undone 1");
            browser.waitFor(row("two-phase/two-phase") + ".querySelector('.states').textContent === 'none'",
                    "the transfer no longer unfinished");

            assertThat(browser.exceptions()).isEmpty();
            Files.write(dir.resolve("dashboard.png"), browser.screenshot());
            assertThat(Files.size(dir.resolve("dashboard.png"))).isGreaterThan(20_000);
        }
        assertThat(db.getCollection("transactions").find(eq("_id", DashboardDemo.INTERRUPTED_TRANSFER)).first()
                .getString("state")).isEqualTo("canceled");
        long money = 0;
        for (Document account : db.getCollection("accounts").find()) {
            money += account.getLong("balance");
            assertThat(account.getList("pendingTransactions", Object.class, java.util.List.of())).isEmpty();
        }
        assertThat(money).isEqualTo(DashboardDemo.TOTAL);
    }

    /**
     * An answer on its way when the operator selects another instance is dropped, not drawn: the ledger's operations,
     * held in the page's {@code fetch} until the two-phase instance is selected and shown, never replace its rows (an
     * open button of them would open the ledger's operation under the two-phase title), nor does an operation opened
     * on the ledger show once the two-phase instance is selected.
     */
    @Test
    void shouldDropAnAnswerForAnInstanceNoLongerSelected(MongoDatabase db, @TempDir Path dir) throws Exception {
        assumeTrue(HeadlessChromium.installed(), "Debian's chromium is not installed");
        DashboardDemo.populate(db);
        Dashboard dashboard = Dashboard.of(db, new DashboardSettings().staleAfter(Duration.ZERO)
                .refreshEvery(Duration.ofHours(1)));
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HeadlessChromium browser = HeadlessChromium.start(dir.resolve("profile"), 1280, 1800)) {
            browser.navigate(server.uri().toString());
            browser.waitFor("window.dashboard && window.dashboard.refreshes >= 1", "the first refresh");
            // the ledger's answers wait until the test lets them go
            browser.evaluate("window.held = []; const real = window.fetch; window.fetch = (url, options) =>"
                    + " String(url).includes('log-reconciliation') ? new Promise(go => window.held.push("
                    + "() => go(real(url, options)))) : real(url, options)");
            browser.evaluate(row("log-reconciliation/log-reconciliation") + ".querySelector('button').click()");
            browser.waitFor("window.held.length === 1", "the ledger's operations asked for");
            browser.evaluate("document.getElementById('find-id').value = 'pay-2'");
            browser.evaluate("document.getElementById('find-form').requestSubmit()");
            browser.waitFor("window.held.length === 2", "the ledger's operation asked for");
            browser.evaluate(row("two-phase/two-phase") + ".querySelector('button').click()");
            browser.waitFor("document.querySelector('#operations tbody tr[data-id] td')?.textContent === '"
                    + DashboardDemo.INTERRUPTED_TRANSFER + "'", "the two-phase instance's operations");

            browser.evaluate("window.held.forEach(go => go())");
            browser.waitFor("window.dashboard.stale === 2", "both of the ledger's answers dropped");
            assertThat(browser.text("document.getElementById('instance-title').textContent"))
                    .startsWith("two-phase");
            assertThat(browser.evaluate("document.querySelectorAll('#operations tbody tr[data-id]').length")
                    .asNumber().intValue()).isEqualTo(1);
            assertThat(browser.text("document.querySelector('#operations tbody tr[data-id] td').textContent"))
                    .isEqualTo(DashboardDemo.INTERRUPTED_TRANSFER);
            assertThat(browser.evaluate("document.getElementById('operation').hidden").asBoolean().getValue())
                    .as("the ledger's operation not opened").isTrue();
            assertThat(browser.exceptions()).isEmpty();
        }
    }

    /**
     * An operator's dead letters from the page, with the application's workers running beside it: the backlog per
     * type, a job found by its id typed bare, jobs found across states by type and by state, the dead filtered by
     * type, then discarded in bulk, one deleted, the rest replayed (and dead again: the worker ran them and they
     * failed again), each read back from the database.
     */
    @Test
    void shouldManageDeadJobsFromThePageWhileWorkersRun(MongoDatabase db, @TempDir Path dir) throws Exception {
        assumeTrue(HeadlessChromium.installed(), "Debian's chromium is not installed");
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        // e1, e2, e3 once each, then e2 and e3 once more after the page replays them
        java.util.concurrent.CountDownLatch fiveRuns = new java.util.concurrent.CountDownLatch(5);
        dev.consistencykit.jobqueue.JobQueue queue = dev.consistencykit.jobqueue.JobQueue.builder(db).name("mail")
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .handler("email", ctx -> {
                    runs.incrementAndGet();
                    fiveRuns.countDown();
                    throw new IllegalStateException("smtp refused");
                })
                .handler("sms", ctx -> {
                    throw new IllegalStateException("no gateway");
                })
                .handler("later", ctx -> { }).build();
        queue.ensureIndexes();
        for (String id : new String[] {"e1", "e2", "e3"}) {
            queue.apply(dev.consistencykit.jobqueue.JobRequest.of("email", new Document())
                    .withId(dev.consistencykit.core.OperationId.of(id)).withMaxAttempts(1));
        }
        for (String id : new String[] {"s1", "s2"}) {
            queue.apply(dev.consistencykit.jobqueue.JobRequest.of("sms", new Document())
                    .withId(dev.consistencykit.core.OperationId.of(id)).withMaxAttempts(1));
        }
        queue.enqueue(dev.consistencykit.jobqueue.JobRequest.of("later", new Document())
                .delayedBy(Duration.ofHours(1)));
        Dashboard dashboard = Dashboard.of(db, new DashboardSettings().actionsEnabled(true).token(TOKEN)
                .refreshEvery(Duration.ofMillis(500)));
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HeadlessChromium browser = HeadlessChromium.start(dir.resolve("profile"), 1280, 1800);
             dev.consistencykit.jobqueue.JobWorkers workers = queue.startWorkers(2)) {
            browser.navigate(server.uri() + "?open=job-queue/mail#token=" + TOKEN);
            browser.waitFor("document.querySelectorAll('#dead tbody tr[data-id]').length === 5", "five dead jobs");
            assertThat(browser.text(row("job-queue/mail") + ".querySelector('.dead').textContent")).isEqualTo("5");
            assertThat(browser.text("document.querySelector('#backlog tr[data-type=\"later\"]').textContent"))
                    .as("type, waiting, oldest waiting, scheduled, awaiting, running, dead").isEqualTo("later0–1000");
            browser.evaluate("window.confirm = () => true");

            // found by its id as an operator types it, without JSON's quotes
            browser.evaluate("document.getElementById('find-id').value = 'e2'");
            browser.evaluate("document.getElementById('find-form').requestSubmit()");
            browser.waitFor("document.getElementById('operation-title').textContent.startsWith('operation e2')",
                    "the job found by its id");

            // found across states: the jobs of a type, whatever their state, then only the scheduled one
            browser.evaluate("document.getElementById('search-type').value = 'later'");
            browser.evaluate("document.getElementById('search-form').requestSubmit()");
            browser.waitFor("document.querySelectorAll('#search-results tbody tr[data-id]').length === 1",
                    "the later job, found by its type");
            assertThat(browser.text("document.querySelector('#search-results tbody tr[data-id]').cells[2]"
                    + ".textContent")).isEqualTo("todo");
            browser.evaluate("document.getElementById('search-type').value = ''");
            browser.evaluate("document.getElementById('search-state').value = 'dead'");
            browser.evaluate("document.getElementById('search-form').requestSubmit()");
            browser.waitFor("document.querySelectorAll('#search-results tbody tr[data-id]').length === 5",
                    "the five dead jobs, found by their state");

            // the sms ones, filtered then discarded in bulk
            browser.evaluate("document.getElementById('dead-type').value = 'sms'");
            browser.evaluate("document.getElementById('dead-filter').requestSubmit()");
            browser.waitFor("document.querySelectorAll('#dead tbody tr[data-id]').length === 2", "the two sms jobs");
            browser.evaluate("document.getElementById('dead-discard-all').click()");
            browser.waitFor("document.getElementById('message').textContent.startsWith('discard: 2 job(s)')",
                    "the bulk discard");

            // one email job deleted from its row, the others replayed by type
            browser.evaluate("document.getElementById('dead-type').value = 'email'");
            browser.evaluate("document.getElementById('dead-filter').requestSubmit()");
            browser.waitFor("document.querySelectorAll('#dead tbody tr[data-id]').length === 3", "the email jobs");
            browser.evaluate("[...document.querySelectorAll('#dead tbody tr[data-id]')].find(r => r.cells[0]"
                    + ".textContent === 'e1').querySelector('button.delete').click()");
            browser.waitFor("document.getElementById('message').textContent.startsWith('delete: job e1')",
                    "the deletion");
            browser.evaluate("document.getElementById('dead-replay-all').click()");
            browser.waitFor("document.getElementById('message').textContent.startsWith('replay: 2 job(s)')",
                    "the bulk replay");
            assertThat(fiveRuns.await(2, java.util.concurrent.TimeUnit.MINUTES)).as("the replayed jobs ran").isTrue();
            assertThat(browser.exceptions()).isEmpty();
            assertThat(workers.health().alive()).isEqualTo(2);
        }
        var jobs = db.getCollection("jobs");
        assertThat(jobs.find(eq("_id", "s1")).first().getString("state")).isEqualTo("discarded");
        assertThat(jobs.find(eq("_id", "s2")).first().getString("state")).isEqualTo("discarded");
        Document e1 = jobs.find(eq("_id", "e1")).first();
        assertThat(e1 == null || e1.containsKey("compactedAt")).as("deleted, or reduced to its id while its writer"
                + " holds it").isTrue();
        assertThat(runs.get()).as("e2 and e3 ran again once each").isEqualTo(5);
        assertThat(jobs.find(eq("_id", "e2")).first().getString("state")).isEqualTo("dead");
        assertThat(jobs.find(eq("_id", "e3")).first().getString("state")).isEqualTo("dead");
    }
}
