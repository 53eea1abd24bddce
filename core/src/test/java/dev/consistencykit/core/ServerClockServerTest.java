package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

@ExtendWith(ServerDatabases.class)
class ServerClockServerTest {

    private static Instant serverTime(MongoDatabase db) {
        return ((Date) db.runCommand(new Document("isMaster", 1)).get("localTime")).toInstant();
    }

    @Test
    void shouldEstimateServerTimeWhenLocalClockIsSkewed(MongoDatabase db) {
        ServerClock ahead = ServerClock.of(db, Clock.offset(Clock.systemUTC(), Duration.ofHours(3)));
        ServerClock behind = ServerClock.of(db, Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-47)));

        Instant server = serverTime(db);

        assertThat(Duration.between(server, ahead.now()).abs()).isLessThan(Duration.ofSeconds(2));
        assertThat(Duration.between(server, behind.now()).abs()).isLessThan(Duration.ofSeconds(2));
        assertThat(ahead.offset()).isBetween(Duration.ofHours(-3).minusSeconds(2), Duration.ofHours(-3).plusSeconds(2));
    }

    @Test
    void shouldPutCutoffInThePastByTheGivenAge(MongoDatabase db) {
        ServerClock clock = ServerClock.of(db);

        Date cutoff = clock.cutoff(Duration.ofMinutes(10));

        Duration age = Duration.between(cutoff.toInstant(), serverTime(db));
        assertThat(age).isBetween(Duration.ofMinutes(10).minusSeconds(2), Duration.ofMinutes(10).plusSeconds(2));
        assertThat(clock.ageOf(serverTime(db).plusSeconds(60))).isEqualTo(Duration.ZERO);
    }

    /**
     * A local clock a test moves by hand. It starts at the system clock's reading only so that the measured offset is
     * small; it never advances by itself, so nothing in the test races real time.
     */
    private static final class MovableClock extends Clock {
        private volatile Instant now = Instant.now();

        void move(Duration by) {
            now = now.plus(by);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void shouldNeverGoBackByAMeasurementsJitterButFollowALargerCorrection(MongoDatabase db) {
        MovableClock local = new MovableClock();
        ServerClock clock = ServerClock.of(db, local, Duration.ofMinutes(5));
        Instant first = clock.now();

        // the local clock steps back 300 ms without a new measurement: the estimate would go back by as much
        local.move(Duration.ofMillis(-300));
        Instant held = clock.now();
        local.move(Duration.ofMillis(500));
        Instant moved = clock.now();
        local.move(Duration.ofSeconds(-5));
        Instant corrected = clock.now();

        assertThat(held).isEqualTo(first);   // a job stamped due at `first` is due for this call
        assertThat(moved).isAfter(first);
        assertThat(corrected).isBefore(first.minusSeconds(4));   // beyond the jitter: followed at once
    }

    @Test
    void shouldGiveEveryThreadTheSameMeasurementAndNeverAnEarlierTimeThanItSaw(MongoDatabase db) throws Exception {
        ServerClock clock = ServerClock.of(db);
        int threads = 8;
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            java.util.List<java.util.concurrent.Future<Duration>> offsets = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                offsets.add(pool.submit(() -> {
                    start.await();
                    Instant stamped = clock.now();   // a job enqueued due now...
                    for (int i = 0; i < 200; i++) {
                        assertThat(clock.now()).isAfterOrEqualTo(stamped);   // ...is due at every later look
                    }
                    return clock.offset();
                }));
            }
            start.countDown();
            java.util.Set<Duration> seen = new java.util.HashSet<>();
            for (java.util.concurrent.Future<Duration> offset : offsets) {
                seen.add(offset.get(1, java.util.concurrent.TimeUnit.MINUTES));
            }
            assertThat(seen).hasSize(1);   // measured once, not once per thread
        } finally {
            pool.shutdownNow();
        }
    }
}
