package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

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
