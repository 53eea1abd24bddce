package dev.consistencykit.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

import org.bson.Document;

import com.mongodb.client.MongoCollection;

/** Puts a workload's documents in place before it is measured. */
final class Fill {

    /** Threads that fill through a library's own API, one document at a time. */
    static final int THREADS = 4;

    private Fill() {
    }

    /** Inserts {@code count} documents made by {@code document}, a thousand per command. */
    static void insert(MongoCollection<Document> collection, int count, IntFunction<Document> document) {
        List<Document> batch = new ArrayList<>(1000);
        for (int i = 0; i < count; i++) {
            batch.add(document.apply(i));
            if (batch.size() == 1000 || i == count - 1) {
                collection.insertMany(batch);
                batch.clear();
            }
        }
    }

    /** Runs {@code each(i)} for i = 0 ... count - 1 on {@value #THREADS} threads. */
    static void parallel(int count, IntConsumer each) {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> parts = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                parts.add(pool.submit(() -> {
                    for (int i = thread; i < count; i += THREADS) {
                        each.accept(i);
                    }
                }));
            }
            for (Future<?> part : parts) {
                part.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while filling", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("filling failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /** Two different accounts out of {@code accounts}. */
    static int[] pair(java.util.SplittableRandom random, int accounts) {
        int from = random.nextInt(accounts);
        int to = random.nextInt(accounts - 1);
        return new int[] {from, to >= from ? to + 1 : to};
    }
}
