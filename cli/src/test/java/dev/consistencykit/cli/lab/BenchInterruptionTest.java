package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A benchmark interrupted (what SIGINT does to the command's thread) returns the figures of what it ran, marked
 * partial, instead of failing: the command prints them and exits 130.
 */
@ExtendWith(MongoTestExtension.class)
class BenchInterruptionTest {

    @Test
    void shouldReturnWhatRanWhenATimedRunIsInterrupted() throws Exception {
        Bench.start();
        // one thread: when the 51st operation starts, the 50th has been counted (an operation is counted after it
        // returns, so waiting for the 50th to start would race with its count)
        CountDownLatch running = new CountDownLatch(51);
        AtomicReference<Thread> command = new AtomicReference<>();
        CompletableFuture<Bench.Comparison> measured = CompletableFuture.supplyAsync(() -> {
            command.set(Thread.currentThread());
            return Bench.interleaved(new Bench.Settings(1, Duration.ofMinutes(10)), t -> running.countDown(),
                    t -> running.countDown());
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

        command.get().interrupt();
        Bench.Comparison partial = measured.get(30, TimeUnit.SECONDS);

        assertThat(Bench.stopped()).isTrue();
        assertThat(partial.raw().operations() + partial.pattern().operations()).isGreaterThanOrEqualTo(50);
        assertThat(partial.raw().elapsed()).isLessThan(Duration.ofMinutes(10));
        Bench.start();
        assertThat(Bench.stopped()).isFalse();
    }

    @Test
    void shouldReportTheOperationsRunWhenAHotRunIsInterrupted(MongoTarget target, MongoDatabase db)
            throws Exception {
        Bench.start();
        db.getCollection("hot").insertOne(new Document("_id", "h").append("n", 0L));
        CountDownLatch running = new CountDownLatch(20);
        AtomicReference<Thread> command = new AtomicReference<>();
        CompletableFuture<Bench.Hot> hot = CompletableFuture.supplyAsync(() -> {
            command.set(Thread.currentThread());
            return Bench.hot(target, db, db.getCollection("hot"), "h", 10_000_000, i -> {
                db.getCollection("hot").updateOne(Filters.eq("_id", "h"), Updates.inc("n", 1L));
                running.countDown();
            }, progress -> { });
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

        command.get().interrupt();
        Bench.Hot partial = hot.get(60, TimeUnit.SECONDS);

        assertThat(Bench.stopped()).isTrue();
        long n = db.getCollection("hot").find().first().getLong("n");
        // the operation the interruption cut may have landed without being counted
        assertThat(partial.operations()).isBetween(n - 1, n).isGreaterThanOrEqualTo(19).isLessThan(10_000_000);
        assertThat(partial.rawOpsPerSec()).as("not measured after an interruption").isNaN();
        Bench.start();
    }
}
