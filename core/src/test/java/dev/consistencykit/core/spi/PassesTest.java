package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoWriteException;
import com.mongodb.ServerAddress;
import com.mongodb.WriteError;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.RetryPolicy;

class PassesTest {

    private static final ServerAddress ADDRESS = new ServerAddress("localhost", 27017);

    private static MongoWriteException conflict() {
        return new MongoWriteException(new WriteError(112, "WriteConflict", new BsonDocument()), ADDRESS, Set.of());
    }

    @Test
    void shouldLeaveARecordWhoseRetriesRanOutOnConflictsToTheNextPass() {
        RetryPolicy quick = RetryPolicy.DEFAULT.withBackoff(java.time.Duration.ZERO, java.time.Duration.ZERO);

        Integer result = Passes.orLeftToNextPass("test", "record 1", -1,
                () -> quick.execute("test", 1, "write", () -> {
                    throw conflict();
                }));

        assertThat(result).isEqualTo(-1);
        assertThat(Passes.orLeftToNextPass("test", "record 2", -1, () -> {
            throw conflict();
        })).isEqualTo(-1);
        assertThat(Passes.orLeftToNextPass("test", "record 3", -1, () -> 3)).isEqualTo(3);
    }

    @Test
    void shouldEndThePassOnAnythingElse() {
        RetryPolicy quick = RetryPolicy.DEFAULT.withBackoff(java.time.Duration.ZERO, java.time.Duration.ZERO);
        MongoSocketReadException lost = new MongoSocketReadException("reply lost", ADDRESS);

        assertThatThrownBy(() -> Passes.orLeftToNextPass("test", "record 1", -1,
                () -> quick.execute("test", 1, "write", () -> {
                    throw lost;
                }))).isInstanceOf(OutcomeUnknownException.class);
        assertThatThrownBy(() -> Passes.orLeftToNextPass("test", "record 2", -1, () -> {
            throw new InvalidInputException("test", "field", "bad");
        })).isInstanceOf(InvalidInputException.class);
    }
}
