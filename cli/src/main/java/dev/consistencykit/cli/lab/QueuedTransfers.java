package dev.consistencykit.cli.lab;

import static dev.consistencykit.cli.lab.ContenderWorkloads.ACCOUNTS;
import static dev.consistencykit.cli.lab.ContenderWorkloads.BANK;
import static dev.consistencykit.cli.lab.ContenderWorkloads.OPENING;
import static dev.consistencykit.cli.lab.ContenderWorkloads.QUEUE_HAS_NO_CONSISTENT_READ;
import static dev.consistencykit.cli.lab.ContenderWorkloads.amount;
import static dev.consistencykit.cli.lab.ContenderWorkloads.bankSumIsTotal;
import static dev.consistencykit.cli.lab.ContenderWorkloads.pair;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.testkit.Accounts;

/** A transfer job whose debit and credit are each guarded by the job's marker on the account. */
final class QueuedTransfers extends BankContender {

    private static JobQueue queue(MongoDatabase db) {
        return JobQueue.builder(db).retryPolicy(PatternLab.FAST_RETRY).maxAttempts(50)
                .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5))
                .handler("transfer", ctx -> {
                    Document p = ctx.payload();
                    ctx.applyOnce(BANK, p.get("from"), Updates.inc(Accounts.BALANCE, -p.getLong("amount")));
                    ctx.applyOnce(BANK, p.get("to"), Updates.inc(Accounts.BALANCE, p.getLong("amount")));
                }).build();
    }

    @Override
    public String name() {
        return "job queue (transfer job)";
    }

    @Override
    public String pattern() {
        return "job-queue";
    }

    @Override
    public void setup(MongoDatabase db) {
        super.setup(db);
        queue(db).ensureIndexes();
    }

    @Override
    public Instance start(MongoDatabase db) {
        JobQueue queue = queue(db);
        return new ContenderActions(random -> {
            int[] p = pair(random);
            queue.enqueue(JobRequest.of("transfer", new Document("from", "a" + p[0]).append("to", "a" + p[1])
                    .append("amount", amount(random))));
        }, () -> queue.processNext().isPresent(), queue::recover, random -> bankSumIsTotal(db), null);
    }

    @Override
    public int backgroundProcesses(int writers) {
        return writers;   // a worker pool as large as the callers, so that the queue keeps up
    }

    @Override
    public String anomalies() {
        return "a job's debit and credit land one after the other, so a raw read between them sees money in"
                + " flight until the job is done.";
    }

    @Override
    public Optional<String> noConsistentRead() {
        return Optional.of(QUEUE_HAS_NO_CONSISTENT_READ);
    }

    @Override
    public List<String> invariants(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        Map<Object, Long> effects = new HashMap<>();
        for (Document job : db.getCollection("jobs").find()) {
            if (!"done".equals(job.getString("state"))) {
                problems.add("job " + job.get("_id") + " ended " + job.getString("state"));
                continue;
            }
            Document p = job.get("payload", Document.class);
            effects.merge(p.getString("from"), -p.getLong("amount"), Long::sum);
            effects.merge(p.getString("to"), p.getLong("amount"), Long::sum);
        }
        problems.addAll(Accounts.checkMoney(Accounts.balances(db, BANK), Accounts.named(ACCOUNTS, OPENING),
                effects, false));
        return problems;
    }
}
