package dev.consistencykit.logreconciliation.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.spi.Listeners;
import dev.consistencykit.logreconciliation.LedgerListener;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.ACCOUNT;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.CHANGES;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.MAX_APPEND_ATTEMPTS;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.PROBE_WINDOW;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.SEQ;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.UNCOMMITTED;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.VALID;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.checkpointSeq;
import static dev.consistencykit.logreconciliation.internal.LedgerSchema.longOf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.bson.Document;

import com.google.common.hash.Hashing;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.core.spi.Deadline;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.LedgerConfig;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.logreconciliation.SeqAllocation;

/**
 * Appending: a transaction checked, numbered in each account's log and inserted in one write.
 */
public final class LedgerAppends {

    /** A transaction checked and fingerprinted. */
    public record Prepared(LedgerTransaction tx, String fingerprint, Object reverses) {
    }

    /** The stored transaction once appended. */
    public record Appended(Document doc, boolean fresh) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(LedgerAppends.class);
    /** The most times the backoff window of consecutive collisions doubles: {@value}. */
    private static final int MAX_BACKOFF_DOUBLINGS = 5;

    private final LedgerConfig config;
    private final LedgerStore store;
    private final LedgerHeads heads;
    private final LedgerCounters counters;
    private final LedgerListener listener;

    /** The appends, through the store, numbering from the heads this process learned. */
    LedgerAppends(LedgerConfig config, LedgerStore store, LedgerHeads heads, LedgerCounters counters,
                  LedgerListener listener) {
        this.config = config;
        this.store = store;
        this.heads = heads;
        this.counters = counters;
        this.listener = listener;
    }

    // ---------------------------------------------------------------- append

    /** Validates and fingerprints {@code tx}: nothing is sent. */
    public Prepared prepare(LedgerTransaction tx) {
        Objects.requireNonNull(tx, "transaction");
        Ids.operationId(config.name(), "id", tx.id().value());
        StringBuilder canonical = new StringBuilder(tx.transfer() ? "T" : "E");
        for (Change c : tx.changes()) {
            canonical.append('|').append(c.account().length()).append(':').append(c.account()).append(':')
                    .append(c.type()).append(':').append(c.value());
        }
        return new Prepared(tx, Hashing.sha256().hashString(canonical, StandardCharsets.UTF_8).toString()
                .substring(0, 32), null);
    }

    /** Appends {@code p} (one write when the heads are known), idempotently for its id. */
    public Appended append(Prepared p) {
        Object id = p.tx().id().value();
        store.verifyIndexes();
        // kept from the archive until released: a retry of this write after its first attempt landed, the
        // transaction was committed and archived must find it here, never append it again (RecordReleases)
        String nonce = store.nonce();
        Map<String, Long> seqs = new LinkedHashMap<>();
        int collided = 0;
        int attempt = 0;
        while (++attempt <= MAX_APPEND_ATTEMPTS && (attempt == 1 || Deadline.remainingNanos() > 0)) {
            for (Change c : p.tx().changes()) {
                seqs.put(c.account(), nextSeq(c.account()));
            }
            Document doc = stored(p, seqs).append(RecordReleases.FIELD, nonce);
            long started = System.nanoTime();
            boolean written = store.append(id, doc);
            long took = System.nanoTime() - started;
            if (written) {
                seqs.forEach(this::learn);
                counters.appended.increment();
                int n = collided;
                LOG.debug("[{}] appended {} at {} after {} collisions", config.name(), id, seqs, n);
                Listeners.call(config.name(), () -> listener.onAppended(p.tx().id(), n));
                doc.put("_id", id);
                store.written(id, nonce);
                return new Appended(doc, true);
            }
            // this attempt's numbers are nobody's now: the insert was refused, or the transaction is in the log under
            // other numbers (an earlier attempt's, or another process's retry of this id)
            abandon(seqs);
            Document existing = store.byId(id);
            if (existing != null) {
                if (!p.fingerprint().equals(existing.getString("h"))) {
                    throw new IdempotencyConflictException(config.name(), id, "transaction " + id
                            + " is already in the ledger with other changes; nothing was written");
                }
                for (Document c : existing.getList(CHANGES, Document.class)) {
                    learn(c.getString(ACCOUNT), c.getLong(SEQ));
                }
                // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm
                // the write concern before reporting it appended
                store.confirmAppended(id);
                if (nonce.equals(existing.getString(RecordReleases.FIELD))) {
                    store.written(id, nonce);   // this call's earlier attempt wrote it; its reply was lost
                }
                return new Appended(existing, false);
            }
            // another writer took one of our sequence numbers: learn which, and the first free ones, and retry
            collided++;
            counters.collisions.increment();
            relearn(id, seqs);
            if (collided > 2) {
                backOff(id, collided, took);
            }
        }
        throw new ServerUnavailableException(config.name(), id, "could not append after " + collided
                + " sequence-number collisions" + (attempt > MAX_APPEND_ATTEMPTS ? "" : " within the call's deadline")
                + "; the accounts " + seqs.keySet() + " are too contended (SeqAllocation.COUNTER never collides); nothing was appended", null);
    }

    /**
     * After a collision: for each account, the first number from the one tried that no transaction holds, from one read
     * of the unique index over {@link LedgerFields#PROBE_WINDOW} numbers per account. An account whose whole window is
     * taken is learned from its log again ({@link #queryHead}). A single indexed read, where re-reading every head read
     * each account's cache and scanned its uncommitted tail: a writer that lost a number then trails the one that took
     * it by that read alone, so that under contention no appender loses every race until it gives up.
     */
    private void relearn(Object id, Map<String, Long> tried) {
        List<String> keys = new ArrayList<>();
        tried.forEach((account, seq) -> {
            for (int i = 0; i < PROBE_WINDOW; i++) {
                keys.add(LedgerSchema.seqKey(account, seq + i));
            }
        });
        Set<String> taken = store.takenSeqKeys(id, keys);
        tried.forEach((account, seq) -> {
            for (int i = 0; i < PROBE_WINDOW; i++) {
                if (!taken.contains(LedgerSchema.seqKey(account, seq + i))) {
                    learn(account, seq + i - 1);   // the next append of this account tries seq + i (or later)
                    return;
                }
            }
            heads.forget(account);
        });
    }

    /**
     * Waits a random part of a window that doubles with each collision in a row (up to {@link #MAX_BACKOFF_DOUBLINGS}
     * times), so that many appenders to the same accounts stop taking the same next numbers in lockstep. The window
     * starts at the larger of the retry policy's backoff and what the refused insert took: on the real engine a
     * collision between two inserts in flight costs a deadlock's detection (PostgreSQL's {@code deadlock_timeout}),
     * and an insert that waits on one in flight is waited on in turn by the next one that takes the same number; with
     * appenders returning sooner than that, one insert waited and the others deadlocked with it until every deadline
     * ran out, nobody appending (learned by query, twelve appenders on two accounts: a round that never ended).
     * Backing off for as long as collisions cost leaves the waiting insert a moment with nobody in flight.
     */
    private void backOff(Object id, int collided, long refusedNanos) {
        int doublings = Math.min(collided - 3, MAX_BACKOFF_DOUBLINGS);
        long window = Math.max(config.retryPolicy().delay(Math.min(collided - 2, 3)).toNanos(), refusedNanos)
                << doublings;
        long nanos = Math.min(ThreadLocalRandom.current().nextLong(window + 1),
                Math.max(0, Deadline.remainingNanos()));
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OperationInterruptedException(config.name(), id,
                    "append: interrupted while backing off a sequence-number collision; nothing was written", e);
        }
    }

    /**
     * Fills numbers reserved from counters and left unused (an append that collided or found its transaction there,
     * a move that lost), so that the transactions after them do not wait out the staleness for a number no append will
     * take. With numbers learned by query nothing was reserved: nothing to fill.
     */
    void abandon(Map<String, Long> reserved) {
        if (config.seqAllocation() != SeqAllocation.COUNTER) {
            return;
        }
        reserved.forEach((account, seq) -> {
            if (store.fillGap(account, seq)) {
                counters.gapsFilled.increment();
                LOG.debug("[{}] filled seqId {} of {}, reserved and left unused", config.name(), seq, account);
            }
        });
    }

    Document stored(Prepared p, Map<String, Long> seqs) {
        List<Document> changes = new ArrayList<>();
        for (Change c : p.tx().changes()) {
            changes.add(LedgerSchema.change(c.account(), c.type().name(), c.signedValue(), seqs.get(c.account())));
        }
        Document doc = new Document("proc", UNCOMMITTED).append("state", VALID).append("h", p.fingerprint())
                .append("transfer", p.tx().transfer()).append(CHANGES, changes);
        if (p.reverses() != null) {
            doc.append("reverses", p.reverses());
        }
        return doc;
    }

    void learn(String account, long seq) {
        heads.learn(account, seq);
    }

    long nextSeq(String account) {
        if (config.seqAllocation() == SeqAllocation.COUNTER) {
            return store.reserveSeq(account);
        }
        Long cached = heads.get(account);
        if (cached != null) {
            return cached + 1;
        }
        return queryHead(account) + 1;
    }

    /** The highest seqId of {@code account}: the cache's (or checkpoint's), or a later one in the log. */
    long queryHead(String account) {
        counters.headQueries.increment();
        Document cache = store.account(account, "read account");
        long floor = Math.max(longOf(cache, SEQ), checkpointSeq(cache));
        // the tail after the cache: transactions holding a later change of this account, each projected to that
        // change alone ($elemMatch projection; the positional one is wrong on the embedded server)
        List<Document> tail = store.changesAfter(account, floor);
        long head = floor;
        for (Document d : tail) {
            for (Document c : d.getList(CHANGES, Document.class, List.of())) {
                head = Math.max(head, c.getLong(SEQ));
            }
        }
        heads.learn(account, head);
        return head;
    }
}
