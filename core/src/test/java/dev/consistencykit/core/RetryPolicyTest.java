package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.mongodb.MongoException;
import com.mongodb.MongoSocketReadException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;

class RetryPolicyTest {

    private static final RetryPolicy FAST = RetryPolicy.DEFAULT.withBackoff(Duration.ofMillis(1),
            Duration.ofMillis(2));
    private static final ServerAddress ADDRESS = new ServerAddress("localhost", 27017);

    @Test
    void shouldRetryTransientErrorsUntilSuccess() {
        AtomicInteger calls = new AtomicInteger();

        String result = FAST.execute("s", "id", "write", () -> {
            if (calls.incrementAndGet() < 3) {
                throw new MongoSocketReadException("reset", ADDRESS);
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(3);
    }

    @Test
    void shouldNotRetryPermanentErrors() {
        AtomicInteger calls = new AtomicInteger();

        assertThatThrownBy(() -> FAST.execute("s", "id", "write", () -> {
            calls.incrementAndGet();
            throw new MongoException(2, "bad value");
        })).isInstanceOf(MongoException.class).hasMessage("bad value");
        assertThat(calls).hasValue(1);
    }

    @Test
    void shouldReportOutcomeUnknownWhenAttemptsRunOutAfterMaybeSending() {
        AtomicInteger calls = new AtomicInteger();

        assertThatThrownBy(() -> FAST.execute("payments", "t1", "debit", () -> {
            calls.incrementAndGet();
            throw new MongoSocketReadException("reset", ADDRESS);
        })).isInstanceOf(OutcomeUnknownException.class)
                .hasMessageContaining("[payments]").hasMessageContaining("debit")
                .hasMessageContaining("may or may not have been applied").hasMessageContaining("id=t1")
                .hasCauseInstanceOf(MongoSocketReadException.class);
        assertThat(calls).hasValue(RetryPolicy.DEFAULT_MAX_ATTEMPTS);
    }

    @Test
    void shouldReportServerUnavailableWhenNothingWasEverSent() {
        assertThatThrownBy(() -> FAST.execute("s", "t1", "debit", () -> {
            throw new MongoTimeoutException("no server");
        })).isInstanceOf(ServerUnavailableException.class).hasMessageContaining("nothing was sent");
    }

    /** A write refused by a concurrent writer wrote nothing, and another writer went through: keep trying. */
    @Test
    void shouldRetryConflictsPastMaxAttemptsUntilTheyGoThrough() {
        AtomicInteger calls = new AtomicInteger();

        String result = FAST.execute("s", "id", "enqueue", () -> {
            if (calls.incrementAndGet() <= 3 * RetryPolicy.DEFAULT_MAX_ATTEMPTS) {
                throw deadlock();
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(3 * RetryPolicy.DEFAULT_MAX_ATTEMPTS + 1);
    }

    @Test
    void shouldReportConflictsThatNeverEndAsNothingWrittenNeverAsAnUnknownOutcome() {
        AtomicInteger calls = new AtomicInteger();

        assertThatThrownBy(() -> FAST.execute("jobs", "j1", "enqueue", () -> {
            calls.incrementAndGet();
            throw deadlock();
        })).isInstanceOf(ServerUnavailableException.class).hasMessageContaining("refused by concurrent writers")
                .hasMessageContaining("nothing was written");
        assertThat(calls).hasValue(RetryPolicy.MAX_CONFLICT_ATTEMPTS);
    }

    @Test
    void shouldReportAnUnknownOutcomeWhenAConflictFollowsALostReply() {
        AtomicInteger calls = new AtomicInteger();

        assertThatThrownBy(() -> FAST.withMaxAttempts(2).execute("jobs", "j1", "enqueue", () -> {
            if (calls.incrementAndGet() == 1) {
                throw new MongoSocketReadException("reset", ADDRESS);   // the first attempt may have landed
            }
            throw deadlock();
        })).isInstanceOf(OutcomeUnknownException.class).hasMessageContaining("may or may not have been applied");
        assertThat(calls).as("conflicts retried past maxAttempts").hasValue(RetryPolicy.MAX_CONFLICT_ATTEMPTS);
    }

    private static com.mongodb.MongoWriteException deadlock() {
        return new com.mongodb.MongoWriteException(new com.mongodb.WriteError(112, "WriteConflict",
                new org.bson.BsonDocument()), ADDRESS, java.util.Set.of());
    }

    @Test
    void shouldBoundBackoffAndGrowItExponentially() {
        RetryPolicy policy = new RetryPolicy(10, Duration.ofMillis(10), Duration.ofMillis(100), 2.0, 0.5);

        assertThat(policy.nominalDelay(1)).isEqualTo(Duration.ofMillis(10));
        assertThat(policy.nominalDelay(2)).isEqualTo(Duration.ofMillis(20));
        assertThat(policy.nominalDelay(3)).isEqualTo(Duration.ofMillis(40));
        assertThat(policy.nominalDelay(9)).isEqualTo(Duration.ofMillis(100));
        for (int i = 0; i < 200; i++) {
            assertThat(policy.delay(2)).isBetween(Duration.ofMillis(10), Duration.ofMillis(30));
            assertThat(policy.delay(9)).isLessThanOrEqualTo(Duration.ofMillis(100));
        }
    }

    @Test
    void shouldRejectInvalidSettings() {
        assertThatThrownBy(() -> RetryPolicy.DEFAULT.withMaxAttempts(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(1), 2, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ZERO, Duration.ZERO, 0.5, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ZERO, Duration.ZERO, 2, 1.5))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
