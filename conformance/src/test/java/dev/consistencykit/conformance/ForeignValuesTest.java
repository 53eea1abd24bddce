package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * What a pattern reads back from its own collections is input again: anyone with write access to the database can
 * leave a value of another type in any field of any record. For each pattern, every top-level field of every record
 * it wrote, and every field of the first entry of each list of entries a record holds, is replaced in turn by a value
 * of another type (a string, a 32-bit integer, a document, null), and every
 * call that reads records ({@code status}, {@code interrupted}, {@code describe} of each operation, {@code recover})
 * must answer or throw a {@link ConsistencyException}: never a {@link ClassCastException}, a
 * {@link NullPointerException} or another raw exception.
 */
@ExtendWith(MongoTestExtension.class)
class ForeignValuesTest {

    private static final RetryPolicy FAST = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1),
            Duration.ofMillis(5)).withMaxAttempts(2);
    private static final List<Object> FOREIGN = List.of("foreign", 7, new Document("x", 1), new NullValue());

    /** A null to set (a {@code List.of} cannot hold one). */
    private record NullValue() {
    }

    @Test
    void shouldAnswerTypedWhateverTwoPhaseRecordsHold(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 100L),
                new Document("_id", "b").append("balance", 100L)));
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).retryPolicy(FAST).build();
        tpc.ensureIndexes();
        tpc.transfer(Transfer.of(OperationId.of("done"), "a", "b", 5));
        tpc.submitTransfer(Transfer.of(OperationId.of("waiting"), "a", "b", 5));
        assertThat(explore(db, tpc, List.of("transactions"), List.of("done", "waiting"))).isEmpty();
    }

    @Test
    void shouldAnswerTypedWhateverJobQueueRecordsHold(MongoDatabase db) {
        db.getCollection("orders").insertOne(new Document("_id", "o1").append("n", 0));
        JobQueue queue = JobQueue.builder(db).retryPolicy(FAST)
                .handler("touch", ctx -> ctx.applyOnce("orders", "o1", Updates.inc("n", 1))).build();
        queue.ensureIndexes();
        queue.apply(JobRequest.of("touch", new Document()).withId(OperationId.of("done")));
        queue.enqueue(JobRequest.of("touch", new Document()).withId(OperationId.of("waiting")));
        assertThat(explore(db, queue, List.of("jobs"), List.of("done", "waiting"))).isEmpty();
    }

    @Test
    void shouldAnswerTypedWhateverLedgerRecordsHold(MongoDatabase db) {
        Ledger ledger = Ledger.builder(db).retryPolicy(FAST).build();
        ledger.ensureIndexes();
        ledger.apply(LedgerTransaction.of(Change.credit("acc", 5)).withId(OperationId.of("done")));
        ledger.submit(LedgerTransaction.of(Change.credit("acc", 1)).withId(OperationId.of("waiting")));
        assertThat(explore(db, ledger, List.of("ledger", "ledgerAccounts"), List.of("done", "waiting"))).isEmpty();
    }

    @Test
    void shouldAnswerTypedWhateverVersionedRecordsHold(MongoDatabase db) {
        VersionedStore store = VersionedStore.builder(db).retryPolicy(FAST).build();
        store.ensureIndexes();
        store.createRoot("r");
        store.apply(ChangeSet.on("r", 0).put("i", new Document("v", 1)).id(OperationId.of("done")).build());
        assertThat(explore(db, store, List.of("versionRoots", "versionItems", "versionHistory"), List.of("done")))
                .isEmpty();
    }

    @Test
    void shouldAnswerTypedWhateverSyncFlagRecordsHold(MongoDatabase db) {
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "u1")
                .append("authorName", "Ann"));
        SyncFlag sync = SyncFlag.builder(db).retryPolicy(FAST).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();
        sync.update("u1", Updates.set("name", "Anne"));
        assertThat(explore(db, sync, List.of("users"), List.of("u1"))).isEmpty();
    }

    /**
     * Every foreign value in every top-level field of every document of {@code collections}, one at a time, each
     * followed by every reading call; the database is put back between cases.
     */
    private static List<String> explore(MongoDatabase db, ConsistencyStrategy<?> strategy, List<String> collections,
                                        List<Object> operationIds) {
        Map<String, List<Document>> original = new LinkedHashMap<>();
        for (String name : db.listCollectionNames()) {
            original.put(name, db.getCollection(name).find().into(new ArrayList<>()));
        }
        List<String> violations = new ArrayList<>();
        int cases = 0;
        for (String name : collections) {
            assertThat(original).as("collection " + name).containsKey(name);
            for (Document record : original.get(name)) {
                for (String field : paths(record)) {
                    for (Object foreign : FOREIGN) {
                        cases++;
                        Object value = foreign instanceof NullValue ? null : foreign;
                        db.getCollection(name).updateOne(Filters.eq("_id", record.get("_id")),
                                Updates.set(field, value));
                        String where = name + "/" + record.get("_id") + " " + field + "=" + value;
                        for (Map.Entry<String, Consumer<ConsistencyStrategy<?>>> call : calls(operationIds)
                                .entrySet()) {
                            try {
                                call.getValue().accept(strategy);
                            } catch (ConsistencyException typed) {
                                // a typed answer
                            } catch (RuntimeException raw) {
                                violations.add(where + ": " + call.getKey() + " threw " + raw);
                            }
                        }
                        restore(db, original);
                    }
                }
            }
        }
        assertThat(cases).as("cases").isPositive();
        return violations;
    }

    /**
     * The record's top-level fields but {@code _id}, and the fields of the first document of each array of documents
     * it holds ({@code participants.0.collection}): where a pattern keeps one entry per participant, change or item.
     */
    private static List<String> paths(Document record) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Object> e : record.entrySet()) {
            if (e.getKey().equals("_id")) {
                continue;
            }
            out.add(e.getKey());
            if (e.getValue() instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Document first) {
                first.keySet().forEach(k -> out.add(e.getKey() + ".0." + k));
            }
        }
        return out;
    }

    private static Map<String, Consumer<ConsistencyStrategy<?>>> calls(List<Object> operationIds) {
        Map<String, Consumer<ConsistencyStrategy<?>>> calls = new LinkedHashMap<>();
        calls.put("status", ConsistencyStrategy::status);
        calls.put("interrupted", s -> s.interrupted(Duration.ZERO, 10));
        for (Object id : operationIds) {
            calls.put("describe(" + id + ")", s -> s.describe(id));
        }
        calls.put("recover", s -> s.recover(Duration.ZERO));
        return calls;
    }

    private static void restore(MongoDatabase db, Map<String, List<Document>> original) {
        for (Map.Entry<String, List<Document>> c : original.entrySet()) {
            MongoCollection<Document> collection = db.getCollection(c.getKey());
            collection.deleteMany(new Document());
            if (!c.getValue().isEmpty()) {
                collection.insertMany(c.getValue());
            }
        }
    }
}
