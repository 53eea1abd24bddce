package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * A staleness of zero means every operation in flight, whatever the instance's estimate of the server's clock: the
 * server stamps a record by its own clock, which may run ahead of the estimate (by half a round trip, more on a loaded
 * machine), and a record stamped a moment ago must not be "younger than zero". Each pattern here runs on an estimate an
 * hour behind the server, leaves one operation in flight, and must list it ({@code interrupted(ZERO)}) and recover it
 * ({@code recover(ZERO)}).
 */
@ExtendWith(MongoTestExtension.class)
class ZeroStalenessTest {

    /** An estimate of the server's clock an hour behind it. */
    private static final ServerClock BEHIND = ServerClock.unsynchronized(Clock.offset(Clock.systemUTC(),
            Duration.ofHours(-1)));

    private static void listsAndRecovers(ConsistencyStrategy<?> strategy, Object id) {
        List<InterruptedOperation> listed = strategy.interrupted(Duration.ZERO, 10);
        assertThat(listed).as("interrupted(ZERO) of " + strategy.pattern()).extracting(InterruptedOperation::id)
                .contains(id);
        assertThat(strategy.recover(Duration.ZERO).examined()).as("recover(ZERO) of " + strategy.pattern())
                .isPositive();
    }

    @Test
    void shouldListAndRecoverATransferJustSubmitted(MongoDatabase db) {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 100L),
                new Document("_id", "b").append("balance", 100L)));
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).serverClock(BEHIND).build();
        tpc.ensureIndexes();
        tpc.submitTransfer(Transfer.of(OperationId.of("t1"), "a", "b", 5));
        listsAndRecovers(tpc, "t1");
    }

    @Test
    void shouldListAndRecoverAJobWhoseWorkerJustDied(MongoDatabase db) {
        AtomicBoolean died = new AtomicBoolean();
        JobQueue queue = JobQueue.builder(db).serverClock(BEHIND).handler("dies", ctx -> {
            if (!died.getAndSet(true)) {
                throw new WorkerDied();
            }
        }).build();
        queue.ensureIndexes();
        queue.enqueue(JobRequest.of("dies", null).withId(OperationId.of("j1")));
        try {
            queue.processNext();
        } catch (WorkerDied expected) {
            // the worker's thread ends here, its job claimed (a queued job is waiting, not interrupted)
        }
        listsAndRecovers(queue, "j1");
    }

    /** What ends a worker's thread in the middle of its job: an {@link Error}, which the library never catches. */
    private static final class WorkerDied extends Error {
        private static final long serialVersionUID = 1L;
    }

    @Test
    void shouldListAndRecoverALedgerTransactionJustSubmitted(MongoDatabase db) {
        Ledger ledger = Ledger.builder(db).serverClock(BEHIND).build();
        ledger.ensureIndexes();
        ledger.submit(LedgerTransaction.of(Change.credit("acc", 1)).withId(OperationId.of("l1")));
        listsAndRecovers(ledger, "l1");
    }

    @Test
    void shouldListAndRecoverAChangeSetJustSubmitted(MongoDatabase db) {
        VersionedStore store = VersionedStore.builder(db).serverClock(BEHIND).build();
        store.ensureIndexes();
        store.createRoot("r");
        store.submit(ChangeSet.on("r", 0).put("i", new Document("v", 1)).id(OperationId.of("c1")).build());
        listsAndRecovers(store, "c1");
    }
}
