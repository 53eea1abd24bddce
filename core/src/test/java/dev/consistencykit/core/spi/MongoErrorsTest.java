package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;

class MongoErrorsTest {

    private static final ServerAddress ADDRESS = new ServerAddress("localhost", 27017);

    @Test
    void shouldClassifyDuplicateKeyByErrorCategory() {
        MongoWriteException e = new MongoWriteException(new WriteError(11000, "E11000 dup", new BsonDocument()),
                ADDRESS, Set.of());
        MongoCommandException c = new MongoCommandException(BsonDocument.parse("{ok: 0, code: 11000, errmsg: 'x'}"),
                ADDRESS);

        assertThat(MongoErrors.classify(e)).isEqualTo(MongoErrors.Kind.DUPLICATE_KEY);
        assertThat(MongoErrors.isDuplicateKey(c)).isTrue();
    }

    @Test
    void shouldSayWhatTheServerSaidWithoutTheDriversPreamble() {
        MongoWriteException e = new MongoWriteException(new WriteError(121, "Document failed validation",
                new BsonDocument()), ADDRESS, Set.of());
        MongoCommandException c = new MongoCommandException(BsonDocument.parse("{ok: 0, code: 2, errmsg: 'bad'}"),
                ADDRESS);

        assertThat(MongoErrors.serverSaid(e)).isEqualTo("code 121: Document failed validation");
        assertThat(MongoErrors.serverSaid(c)).isEqualTo("code 2: bad");
    }

    @Test
    void shouldTakeADistributedDeadlockForAConflict() {
        // seen on the distributed engine: a recovery's multi-shard command cancelled by Citus' deadlock detection
        MongoCommandException e = new MongoCommandException(BsonDocument.parse("{ok: 0, code: 1, errmsg:"
                + " 'canceling the transaction since it was involved in a distributed deadlock'}"), ADDRESS);

        assertThat(MongoErrors.isWriteConflict(e)).isTrue();
        assertThat(MongoErrors.classify(e)).isEqualTo(MongoErrors.Kind.CONFLICT);
    }

    @Test
    void shouldTakeAStatementTheServerStoppedForOneThatMayHaveApplied() {
        // seen on the distributed engine: a participant's update whose worker waited on a lock past the call's time
        MongoWriteException canceled = new MongoWriteException(new WriteError(67371461,
                "canceling statement due to statement timeout", new BsonDocument()), ADDRESS, Set.of());
        MongoWriteException maxTime = new MongoWriteException(new WriteError(50, "operation exceeded time limit",
                new BsonDocument()), ADDRESS, Set.of());
        MongoCommandException internal = new MongoCommandException(BsonDocument.parse(
                "{ok: 0, code: 1, errmsg: 'canceling statement due to user request'}"), ADDRESS);
        MongoCommandException nodeGone = new MongoCommandException(BsonDocument.parse(
                "{ok: 0, code: " + MongoErrors.sqlState("08006") + ", errmsg: 'connection to the remote node lost'}"),
                ADDRESS);

        assertThat(MongoErrors.sqlState("57014")).isEqualTo(67371461);
        assertThat(List.of(canceled, maxTime, internal, nodeGone)).allSatisfy(e -> {
            assertThat(MongoErrors.classify(e)).isEqualTo(MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED);
            assertThat(MongoErrors.isTransient(e)).isTrue();
        });
    }

    @Test
    void shouldNotClassifyByMessageText() {
        MongoWriteException e = new MongoWriteException(new WriteError(2, "E11000 duplicate key (not really)",
                new BsonDocument()), ADDRESS, Set.of());

        assertThat(MongoErrors.classify(e)).isEqualTo(MongoErrors.Kind.PERMANENT);
    }

    @Test
    void shouldClassifyErrorsBeforeSendingAsNotSent() {
        assertThat(MongoErrors.classify(new MongoTimeoutException("no server")))
                .isEqualTo(MongoErrors.Kind.TRANSIENT_NOT_SENT);
        assertThat(MongoErrors.classify(new MongoSocketOpenException("refused", ADDRESS)))
                .isEqualTo(MongoErrors.Kind.TRANSIENT_NOT_SENT);
    }

    @Test
    void shouldClassifyLostRepliesAndLabelledErrorsAsMaybeApplied() {
        assertThat(MongoErrors.classify(new MongoSocketReadException("reset", ADDRESS)))
                .isEqualTo(MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED);
        MongoException labelled = new MongoException(91, "shutting down");
        labelled.addLabel(MongoErrors.RETRYABLE_WRITE_ERROR_LABEL);
        assertThat(MongoErrors.classify(labelled)).isEqualTo(MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED);
        assertThat(MongoErrors.isTransient(labelled)).isTrue();
    }

    @Test
    void shouldClassifyASingleDocumentsConflictAsNothingWrittenAndABatchsAsMaybeApplied() {
        MongoWriteException deadlock = new MongoWriteException(new WriteError(MongoErrors.POSTGRES_DEADLOCK_DETECTED,
                "deadlock detected", new BsonDocument()), ADDRESS, Set.of());
        MongoCommandException conflict = new MongoCommandException(BsonDocument.parse(
                "{ok: 0, code: 112, errmsg: 'WriteConflict'}"), ADDRESS);
        com.mongodb.MongoBulkWriteException batch = new com.mongodb.MongoBulkWriteException(
                com.mongodb.bulk.BulkWriteResult.acknowledged(1, 0, 0, 0, java.util.List.of(), java.util.List.of()),
                java.util.List.of(new com.mongodb.bulk.BulkWriteError(112, "WriteConflict", new BsonDocument(), 1)),
                null, ADDRESS, Set.of());

        assertThat(MongoErrors.classify(deadlock)).isEqualTo(MongoErrors.Kind.CONFLICT);
        assertThat(MongoErrors.classify(conflict)).isEqualTo(MongoErrors.Kind.CONFLICT);
        assertThat(MongoErrors.classify(batch)).isEqualTo(MongoErrors.Kind.TRANSIENT_MAYBE_APPLIED);
        assertThat(MongoErrors.isTransient(deadlock)).isTrue();
    }

    @Test
    void shouldClassifyUnlabelledServerErrorsAsPermanent() {
        assertThat(MongoErrors.classify(new MongoException(2, "bad value"))).isEqualTo(MongoErrors.Kind.PERMANENT);
        assertThat(MongoErrors.isTransient(new MongoException(2, "bad value"))).isFalse();
    }
}
