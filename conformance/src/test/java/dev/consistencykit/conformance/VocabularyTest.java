package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobState;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerState;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncState;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionState;
import dev.consistencykit.versioning.VersionedStore;

/**
 * One vocabulary of states: every pattern has a public state enum whose names are stored, counted and reported in
 * lower case ({@code stored()}, {@code fromStored()}), spelled {@code canceled}; every result a pattern returns and
 * every key of its {@code status()} is one of those names; a status count is found whatever the case of the name.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VocabularyTest {

    private MongoDatabase db;

    static Stream<Class<?>> stateEnums() {
        return Stream.of(SyncState.class, JobState.class, TransactionState.class, LedgerState.class,
                VersionState.class);
    }

    @BeforeAll
    void open() {
        db = MongoTarget.fromEnvironment().client().getDatabase(MongoTarget.freshDatabaseName("vocabulary"));
    }

    @AfterAll
    void drop() {
        MongoTarget.drop(db);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stateEnums")
    void shouldStoreEveryStateUnderItsLowerCaseName(Class<?> states) throws Exception {
        assertThat(states.isEnum()).isTrue();
        Method stored = states.getMethod("stored");
        Method fromStored = states.getMethod("fromStored", String.class);
        for (Object state : states.getEnumConstants()) {
            String name = ((Enum<?>) state).name();
            assertThat(stored.invoke(state)).as(name).isEqualTo(name.toLowerCase(Locale.ROOT));
            assertThat(fromStored.invoke(null, name.toLowerCase(Locale.ROOT))).isSameAs(state);
            assertThat(name).doesNotContain("CANCELLED");
        }
    }

    @Test
    void shouldReportResultsAndCountsUnderThoseNames() {
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 100L),
                new Document("_id", "bob").append("balance", 0L)));
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        List<String> failures = new ArrayList<>();

        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();
        payments.ensureIndexes();
        check(failures, payments, TransactionState.class,
                payments.transfer(Transfer.of(OperationId.of("t1"), "alice", "bob", 5)), "done");

        JobQueue jobs = JobQueue.builder(db).handler("noop", ctx -> { }).build();
        jobs.ensureIndexes();
        jobs.enqueue(JobRequest.of("noop", new Document()));
        check(failures, jobs, JobState.class, jobs.processNext().orElseThrow(), "done");

        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();
        check(failures, ledger, LedgerState.class, ledger.apply(LedgerTransaction.of(Change.credit("alice", 5))),
                "committed");
        LedgerTransaction refund = LedgerTransaction.of(Change.credit("bob", 5)).withId(OperationId.of("refund"));
        ledger.cancel(ledger.append(refund));
        check(failures, ledger, LedgerState.class, ledger.apply(refund), "canceled");

        VersionedStore store = VersionedStore.builder(db).build();
        store.ensureIndexes();
        store.createRoot("r");
        check(failures, store, VersionState.class, store.apply(ChangeSet.on("r", 0).put("a", new Document()).build()),
                "committed");

        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();
        check(failures, sync, SyncState.class, sync.update("u1", Updates.set("name", "Bea")), "synced");

        assertThat(failures).isEmpty();
        assertThat(jobs.status().count("DONE")).as("a count is found in any case").isEqualTo(1)
                .isEqualTo(jobs.status().count("done"));
    }

    private static void check(List<String> failures, ConsistencyStrategy<?> strategy, Class<?> states,
                              OperationResult result, String expected) {
        Set<String> names = Stream.of(states.getEnumConstants())
                .map(s -> ((Enum<?>) s).name().toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
        if (!result.state().equals(expected)) {
            failures.add(strategy.name() + ": result state " + result.state() + ", expected " + expected);
        }
        Set<String> keys = strategy.status().countsByState().keySet();
        if (!names.containsAll(keys)) {
            failures.add(strategy.name() + ": status keys " + keys + " are not all states of " + states.getSimpleName()
                    + " " + names);
        }
    }
}
