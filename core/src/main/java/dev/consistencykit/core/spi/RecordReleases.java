package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerClock;

/**
 * The guard against resurrection: an operation's record is written carrying its recorder's nonce in
 * {@link #FIELD}, and nothing removes a record that still carries one. The recorder releases it once it knows its
 * record write will not be sent again.
 *
 * <p><b>Why.</b> A record write is an upsert by the operation's id, retried when its reply is lost. If the first
 * attempt landed, another process finished the operation and a pruner (or archiver) removed its record while the
 * recorder was paused, the retry would insert the record afresh and the operation would run a second time. Whether
 * that can happen depends on nothing a pruner can see, however long it waits: the recorder may be paused for any
 * length of time. So the record keeps the evidence until the recorder itself says it is done with the write. Safety
 * rests on that order of writes alone, never on clocks or on retention.
 *
 * <p><b>Cost.</b> The field is set in the record write itself. Releases are batched: this instance remembers the
 * records it wrote and unsets the field on all of them with one {@code updateMany} when {@value #BATCH} have
 * gathered, and on every {@link #flush()} (its pattern's {@code recover}, {@code prune} and {@code close}).
 *
 * <p><b>Bounded without the writer.</b> A held record past its retention is not kept whole: the remover compacts it
 * ({@link #compact}) to its id, state and hold, a few dozen bytes, which is all a late retry reads. The compacted
 * record goes once released. A writer that idles or died therefore keeps at most its unreleased records' evidence
 * (at most {@value #BATCH} a process, plus its calls in flight), never their content, and never a count that grows
 * with throughput or time; {@link #kept} lists them, with their writer and age, for operators' tools. An operator who
 * knows no process of that time can still be paused may unset the field (docs/operations.md).
 *
 * <p>Thread-safe.
 */
public final class RecordReleases {

    /** The field a record carries until its recorder releases it: the nonce of the call that wrote it. */
    public static final String FIELD = "recordedBy";

    /** How many records this instance holds before it releases them in one write. */
    public static final int BATCH = 64;

    private static final Logger LOG = LoggerFactory.getLogger(RecordReleases.class);

    private final String instanceName;
    private final MongoCollection<Document> records;
    private final String field;
    private final RetryPolicy retryPolicy;
    private final Set<Pending> pending = new LinkedHashSet<>();

    private record Pending(Object id, String nonce) {
    }

    /**
     * @param instanceName for messages
     * @param records      the collection of operation records
     * @param retryPolicy  the instance's policy; a release is idempotent
     */
    public RecordReleases(String instanceName, MongoCollection<Document> records, RetryPolicy retryPolicy) {
        this(instanceName, records, retryPolicy, FIELD);
    }

    /**
     * Releases of another hold than the recorder's, kept in {@code field}: for a record written on behalf of a call
     * whose own retries it must outlive (the caller of an outbox write, whose record a relayer writes).
     *
     * @param field the field holding the nonce of the call the record waits for
     */
    public RecordReleases(String instanceName, MongoCollection<Document> records, RetryPolicy retryPolicy,
                          String field) {
        this.field = Names.fieldName(instanceName, "field", field);
        this.instanceName = instanceName;
        this.records = Objects.requireNonNull(records, "records");
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
    }

    /** The filter of records a remover may delete: released ones. */
    public static Bson released() {
        return exists(FIELD, false);
    }

    /** The field a held record carries once compacted: when its content was removed (server time). */
    public static final String COMPACTED = "compactedAt";

    /**
     * Compacts the held records that {@code removable} selects (those a remover would delete but for a hold): removes
     * their {@code content} fields and stamps {@link #COMPACTED}, in one write. What stays (the id, the state, the
     * hold, what a late retry of the record write reads) is a few dozen bytes; it goes when the hold is released and a
     * remover runs again. So a writer that idles, or died, keeps the evidence against its late retry, never the
     * record's content past its retention.
     *
     * @param holds   the fields that hold a record ({@link #FIELD}, and any other hold the pattern keeps)
     * @param content the fields to remove
     * @return records compacted
     */
    public static long compact(MongoCollection<Document> records, Bson removable, List<String> holds,
                               List<String> content) {
        List<Bson> held = new ArrayList<>();
        holds.forEach(h -> held.add(exists(h, true)));
        List<Bson> unset = new ArrayList<>();
        content.forEach(f -> unset.add(Updates.unset(f)));
        unset.add(Updates.currentDate(COMPACTED));
        return records.updateMany(and(removable, held.size() == 1 ? held.get(0)
                : com.mongodb.client.model.Filters.or(held), exists(COMPACTED, false)), Updates.combine(unset))
                .getModifiedCount();
    }

    /** Whether {@code record} was compacted ({@link #compact}): only its state and hold are left. */
    public static boolean isCompacted(Document record) {
        return record != null && record.containsKey(COMPACTED);
    }

    /**
     * Creates the sparse index on {@link #FIELD} that {@link #kept} reads by (records carry it only until released,
     * so the index holds the kept ones only). Idempotent.
     */
    public static void ensureIndex(MongoCollection<Document> records) {
        records.createIndex(com.mongodb.client.model.Indexes.ascending(FIELD),
                new com.mongodb.client.model.IndexOptions().name("recorded_by").sparse(true));
    }

    /**
     * The records of {@code records} still held by their writer whose {@code timeField} (server time) is older than
     * {@code cutoff}, at most {@code limit}: one indexed read ({@link #ensureIndex}).
     */
    public static List<KeptRecord> kept(MongoCollection<Document> records, String timeField, ServerClock clock,
                                        java.util.Date cutoff, int limit) {
        List<KeptRecord> out = new ArrayList<>();
        // each record once: a scan of several batches without a sort returns some documents twice on DocumentDB
        java.util.Set<Object> seen = new java.util.HashSet<>();
        for (Document d : records.find(and(exists(FIELD, true), com.mongodb.client.model.Filters.lte(timeField,
                cutoff))).projection(com.mongodb.client.model.Projections.include(FIELD, timeField, COMPACTED))
                .limit(limit)) {
            if (!seen.add(Ids.idKey(d.get("_id"), records.getCodecRegistry()))) {
                continue;
            }
            java.util.Date at = d.get(timeField) instanceof java.util.Date date ? date : null;
            out.add(new KeptRecord(d.get("_id"), String.valueOf(d.get(FIELD)),
                    at == null ? java.time.Duration.ZERO : clock.ageOf(at.toInstant()), d.containsKey(COMPACTED)));
        }
        return out;
    }

    /**
     * Notes that the record {@code id} written by the call {@code nonce} will not be written again by it; releases
     * the batch when it is full (then one write, in the caller's thread). A release that fails leaves the batch noted
     * for the next flush and does not fail the caller, whose own operation succeeded.
     */
    public void written(Object id, String nonce) {
        boolean full;
        synchronized (pending) {
            pending.add(new Pending(id, Objects.requireNonNull(nonce, "nonce")));
            full = pending.size() >= BATCH;
        }
        if (full) {
            try {
                flush();
            } catch (MongoException | ConsistencyException e) {
                LOG.warn("[{}] releasing {} records failed, kept for the next flush: {}", instanceName, BATCH,
                        e.getMessage());
            }
        }
    }

    /**
     * Releases every record this instance noted: one write. If it fails, they stay noted for the next flush, and
     * the failure is thrown.
     */
    public void flush() {
        List<Pending> batch;
        synchronized (pending) {
            batch = new ArrayList<>(pending);
            pending.clear();
        }
        if (batch.isEmpty()) {
            return;
        }
        List<Object> ids = Ids.distinct(batch.stream().map(Pending::id).toList(), records.getCodecRegistry());
        List<String> nonces = batch.stream().map(Pending::nonce).distinct().toList();
        boolean done = false;
        try {
            // a record of another call never carries one of this instance's nonces: the pairs cannot cross
            retryPolicy.run(instanceName, null, "release records", () -> records.updateMany(
                    and(in("_id", ids), in(field, nonces)), Updates.unset(field)));
            done = true;
        } finally {
            if (!done) {
                synchronized (pending) {
                    pending.addAll(batch);
                }
            }
        }
    }
}
