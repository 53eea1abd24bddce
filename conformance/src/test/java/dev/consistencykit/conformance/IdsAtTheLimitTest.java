package dev.consistencykit.conformance;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The id limit ({@link Ids#MAX_ID_BYTES}) is a prediction of what every server holds in every index, and the patterns
 * build keys of their own from several ids: an item version's {@code _id} holds its root's and its item's, a version
 * record's its root's, an archived ledger entry's its transaction's and an account's. The real engine keeps its
 * primary key in a PostgreSQL B-tree, which refuses a row over 2,704 bytes, so the prediction holds only if the widest
 * such key stays under that. Here every id a caller gives is exactly at the limit, of random characters that no
 * compression shrinks, and every pattern runs its whole course: operation, recovery, settlement, archiving, pruning.
 */
class IdsAtTheLimitTest {

    private final Random random = new Random(20261128);
    private MongoDatabase db;

    @BeforeEach
    void connect() {
        db = MongoTarget.fromEnvironment().client().getDatabase(MongoTestExtension.freshName("idlimit"));
    }

    @AfterEach
    void drop() {
        MongoTarget.drop(db);
    }

    /** {@code prefix} and random printable ASCII, {@link Ids#MAX_ID_BYTES} bytes in all (minus {@code less}). */
    private String atTheLimit(String prefix, int less) {
        StringBuilder s = new StringBuilder(prefix);
        while (s.length() < Ids.MAX_ID_BYTES - less) {
            s.append((char) (33 + random.nextInt(94)));
        }
        return s.toString();
    }

    private String atTheLimit(String prefix) {
        return atTheLimit(prefix, 0);
    }

    @Test
    void shouldCommitSettleReadAndPruneATreeWhoseRootAndItemIdsAreAtTheLimit() {
        String root = atTheLimit("root-");
        String item = atTheLimit("item-");
        VersionedStore store = VersionedStore.builder(db).retention(Retention.keepLast(1)).build();
        store.ensureIndexes();
        store.createRoot(root);

        store.commit(ChangeSet.on(root, 0).id(OperationId.of(atTheLimit("cs-1-"))).put(item, new Document("n", 1))
                .build());
        store.commit(ChangeSet.on(root, 1).id(OperationId.of(atTheLimit("cs-2-"))).put(item, new Document("n", 2))
                .build());
        assertThat(store.settle()).isEqualTo(2);
        assertThat(store.prune()).isPositive();

        VersionedTree tree = store.read(root);
        assertThat(tree.version()).isEqualTo(2);
        assertThat(tree.item(item)).contains(new Document("n", 2));
        assertThat(store.get(root, item)).contains(new Document("n", 2));
        assertThat(store.readAsOf(root, 2).item(item)).contains(new Document("n", 2));
        assertThat(store.versions(root)).isNotEmpty();
    }

    @Test
    void shouldAppendCommitAndArchiveATransactionWhoseIdAndAccountsAreAtTheLimit() {
        String from = atTheLimit("a-");
        String to = atTheLimit("b-");
        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();

        assertThat(ledger.apply(LedgerTransaction.transfer(from, to, 7).withId(OperationId.of(atTheLimit("tx-"))))
                .isCommitted()).isTrue();
        ledger.recover(Duration.ZERO);
        assertThat(ledger.archive(Duration.ZERO)).isEqualTo(1);

        assertThat(ledger.balance(from)).isEqualTo(-7L);
        assertThat(ledger.balance(to)).isEqualTo(7L);
        assertThat(ledger.reconcile(from, false).problems()).isEmpty();
    }

    @Test
    void shouldTransferBetweenAccountsWhoseIdsAreAtTheLimit() {
        String alice = atTheLimit("alice-");
        String bob = atTheLimit("bob-");
        db.getCollection("accounts").insertMany(List.of(new Document("_id", alice).append("balance", 100L),
                new Document("_id", bob).append("balance", 100L)));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();
        payments.ensureIndexes();

        assertThat(payments.transfer(Transfer.of(OperationId.of(atTheLimit("t-")), alice, bob, 30)).isCommitted())
                .isTrue();
        assertThat(payments.recover(Duration.ZERO).examined()).isZero();

        assertThat(db.getCollection("accounts").find(eq("_id", alice)).first().getLong("balance")).isEqualTo(70L);
        assertThat(db.getCollection("accounts").find(eq("_id", bob)).first().getLong("balance")).isEqualTo(130L);
    }

    @Test
    void shouldRunAJobWhoseIdsKeysAndDocumentsAreAtTheLimit() {
        String order = atTheLimit("order-");
        String user = atTheLimit("user-");
        db.getCollection("orders").insertOne(new Document("_id", order).append("status", "new"));
        db.getCollection("users").insertOne(new Document("_id", user).append("n", 0));
        JobQueue queue = JobQueue.builder(db)
                .handler("touch", ctx -> ctx.applyOnce("users", user, Updates.inc("n", 1))).build();
        queue.ensureIndexes();
        JobQueue.ensureOutboxIndex(db.getCollection("orders"));
        JobQueue.ensureEffectIndexes(db.getCollection("users"));

        assertThat(queue.apply(JobRequest.of("touch", new Document()).withId(OperationId.of(atTheLimit("j1-")))
                .withDedupeKey(atTheLimit("dedupe-"))).isCommitted()).isTrue();
        // an ordering key is stored behind a short prefix, within the same limit
        queue.enqueue(JobRequest.of("touch", new Document()).withId(OperationId.of(atTheLimit("j2-")))
                .withOrderingKey(atTheLimit("line-", 8)));
        assertThat(queue.enqueueWith(db.getCollection("orders"), order, null, Updates.set("status", "paid"),
                JobRequest.of("touch", new Document()).withId(OperationId.of(atTheLimit("j3-"))))).isPresent();
        queue.relayOutbox(db.getCollection("orders"));
        while (queue.processNext().isPresent()) {
            // every job, the ordered one after its line's turn
        }

        assertThat(db.getCollection("users").find(eq("_id", user)).first().getInteger("n")).isEqualTo(3);
        assertThat(db.getCollection("orders").find(eq("_id", order)).first().getString("status")).isEqualTo("paid");
        assertThat(queue.status().inFlight()).isZero();
    }

    @Test
    void shouldPropagateTheUpdateOfAMasterWhoseIdIsAtTheLimit() {
        String ann = atTheLimit("ann-");
        db.getCollection("users").insertOne(new Document("_id", ann).append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", atTheLimit("comment-")).append("authorId", ann)
                .append("authorName", "Ann"));
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();

        assertThat(sync.update(ann, Updates.set("name", "Annie")).isCommitted()).isTrue();

        assertThat(db.getCollection("comments").find(eq("authorId", ann)).first().getString("authorName"))
                .isEqualTo("Annie");
        assertThat(sync.recover(Duration.ZERO).examined()).isZero();
    }
}
