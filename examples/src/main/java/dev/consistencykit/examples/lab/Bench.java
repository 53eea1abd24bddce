package dev.consistencykit.examples.lab;

import static com.mongodb.client.model.Filters.eq;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

import org.bson.Document;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

/** Timed loops for the benchmarks: a pattern's operation, and raw single-document updates with the same threads. */
public final class Bench {

    /**
     * @param threads  concurrent clients
     * @param duration how long each measured phase runs
     */
    public record Settings(int threads, Duration duration) {

        /** Validates. */
        public Settings {
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1, was " + threads);
            }
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("duration must be > 0, was " + duration);
            }
        }
    }

    /** Operations completed and the time they took. */
    public record Run(long operations, Duration elapsed) {

        /** Operations per second. */
        public double perSecond() {
            return operations / (elapsed.toNanos() / 1e9);
        }
    }

    private Bench() {
    }

    /** Runs {@code operation(thread)} on {@code threads} threads for {@code duration}. */
    public static Run timed(int threads, Duration duration, IntConsumer operation) {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicLong count = new AtomicLong();
        long start = System.nanoTime();
        long deadline = start + duration.toNanos();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline) {
                        operation.accept(thread);
                        count.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("benchmark interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("benchmark operation failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        return new Run(count.get(), Duration.ofNanos(System.nanoTime() - start));
    }

    /** How long a pattern runs before it is measured: on 2 cores the JIT compiler competes with a cold run. */
    public static final Duration WARM_UP = Duration.ofSeconds(3);

    /** Runs {@code operation} unmeasured for {@link #WARM_UP}, so the measured phase sees compiled code. */
    public static void warmUp(Settings settings, IntConsumer operation) {
        timed(settings.threads(), WARM_UP, operation);
    }

    /**
     * Raw single-document {@code updateOne($inc)} throughput on {@code documents} documents of a scratch collection,
     * with the same threads and duration: the baseline every pattern is compared with.
     */
    public static Run raw(MongoDatabase db, Settings settings, int documents) {
        MongoCollection<Document> raw = db.getCollection("raw_baseline");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < documents; i++) {
            docs.add(new Document("_id", i).append("n", 0L));
        }
        raw.insertMany(docs);
        timed(settings.threads(), Duration.ofSeconds(1),
                t -> raw.updateOne(eq("_id", ThreadLocalRandom.current().nextInt(documents)), Updates.inc("n", 1L)));
        return timed(settings.threads(), settings.duration(),
                t -> raw.updateOne(eq("_id", ThreadLocalRandom.current().nextInt(documents)), Updates.inc("n", 1L)));
    }
}
