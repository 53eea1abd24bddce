package dev.consistencykit.twophase.internal;

import static dev.consistencykit.twophase.internal.TransactionCodec.decode;
import static dev.consistencykit.twophase.internal.TransactionSchema.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionSchema.IN_FLIGHT;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionSchema.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COMMIT;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ID;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_PREPARE;
import static dev.consistencykit.twophase.internal.TransactionSchema.SET_ASIDE;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.reason;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.bson.Document;

import dev.consistencykit.core.InterruptedOperation;
import dev.consistencykit.core.KeptRecord;
import dev.consistencykit.core.OperationView;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyStatus;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.StateSnapshot;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseAudit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseMetrics;

/**
 * The operator's reads: one transaction with its participants as a reader sees them, the transactions finished
 * lately, the ones in flight too long, the counts by state, the records held, the audit of every record, and the
 * counters.
 */
public final class TransactionAudit implements PatternInspection<TwoPhaseMetrics> {

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final TransactionReads reads;
    private final TransactionCounters counters;
    private final ServerClock clock;

    TransactionAudit(TwoPhaseConfig config, TransactionStore store, TransactionReads reads,
                     TransactionCounters counters, ServerClock clock) {
        this.config = config;
        this.store = store;
        this.reads = reads;
        this.counters = counters;
        this.clock = clock;
    }

    /**
     * The transaction {@code id} and its participants as {@link TransactionReads#readConsistent} shows them (as stored,
     * with a note, when that read cannot place a transaction in flight on them).
     */
    @Override
    public Optional<OperationView> describe(Object id) {
        Document tx = store.read(id);
        if (tx == null) {
            return Optional.empty();
        }
        Map<String, List<Object>> byCollection = new java.util.LinkedHashMap<>();
        for (Document p : tx.getList(PARTICIPANTS, Document.class, List.of())) {
            if (p.get(P_COLLECTION) instanceof String c && Names.isCollectionName(c)
                    && Ids.isDocumentId(p.get(P_ID))) {
                byCollection.computeIfAbsent(c, k -> new ArrayList<>()).add(p.get(P_ID));
            }
        }
        List<OperationView.Touched> touched = new ArrayList<>();
        byCollection.forEach((collection, ids) -> {
            ConsistentRead read = reads.readChecked(collection, ids);
            Map<Object, Document> seen = new HashMap<>();
            String note = "as readConsistent shows it";
            if (read.isResolved()) {
                read.documents().forEach(d -> seen.put(Ids.idKey(d.get("_id")), d));
            } else {
                note = "as stored: readConsistent could not place transactions " + read.unresolved();
                store.documents(collection, ids).forEach(d -> seen.put(Ids.idKey(d.get("_id")), d));
            }
            for (Object participant : ids) {
                touched.add(new OperationView.Touched(collection, participant, seen.get(Ids.idKey(participant)), note));
            }
        });
        return Optional.of(new OperationView(id, String.valueOf(tx.get(STATE)), tx, touched));
    }

    /** Transactions done or canceled within the window, by the {@code state_lastModified} index. */
    @Override
    public java.util.OptionalLong finishedSince(Duration window, int cap) {
        return java.util.OptionalLong.of(store.countFinishedSince(clock.cutoff(window), cap));
    }

    /** In-flight transactions not modified for {@code staleAfter}, oldest first. */
    @Override
    public List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        List<InterruptedOperation> out = new ArrayList<>();
        for (Document tx : store.inFlightBefore(clock.cutoff(staleAfter), limit)) {
            List<String> where = new ArrayList<>();
            for (Document p : tx.getList(PARTICIPANTS, Document.class, List.of())) {
                where.add(p.get(P_COLLECTION) + "/" + p.get(P_ID));
            }
            Document aside = tx.get(SET_ASIDE) instanceof Document d ? d : null;
            out.add(new InterruptedOperation(tx.get("_id"), tx.getString(STATE),
                    clock.ageOf(tx.getDate(LAST_MODIFIED).toInstant()), "participants " + where
                    + (aside == null ? "" : "; set aside by recovery: " + aside.get("reason"))));
        }
        return out;
    }

    /** Counts per state and the oldest in-flight age, from one snapshot ({@link StateSnapshot}). */
    @Override
    public StrategyStatus status() {
        StateSnapshot snapshot = store.snapshot();
        Optional<Duration> age = snapshot.oldestOf(IN_FLIGHT).map(clock::ageOf);
        return new StrategyStatus(config.name(), snapshot.counts(), snapshot.sum(IN_FLIGHT), age);
    }

    /** Held records older than {@code olderThan}: see {@link RecordReleases#kept}. */
    @Override
    public List<KeptRecord> kept(Duration olderThan, int limit) {
        return store.kept(clock, clock.cutoff(olderThan), limit);
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#audit(String)}. */
    public TwoPhaseAudit audit(String field) {
        Names.fieldPath(config.name(), "field", field);
        List<String> problems = new ArrayList<>();
        List<Object> inFlight = new ArrayList<>();
        Map<String, Long> effects = new HashMap<>();
        Map<String, Map<Object, Long>> byDocument = new TreeMap<>();
        Map<String, Set<Object>> terminalByCollection = new HashMap<>();
        Set<Object> known = new HashSet<>();
        // sorted by _id: an unsorted scan of several batches may return a document twice on DocumentDB
        // (docs/servers.md), and the audit sums what it reads
        for (Document tx : store.everyRecord()) {
            Object id = tx.get("_id");
            known.add(id);
            if (RecordReleases.isCompacted(tx)) {
                continue;   // finished and past its retention: only the evidence against a late retry is left
            }
            TransactionState state = TransactionState.fromStored(tx.getString(STATE));
            List<String> history = tx.getList(HISTORY, String.class, List.of());
            if (history.isEmpty() || !history.get(history.size() - 1).equals(state.stored())) {
                problems.add("transaction " + id + ": history " + history + " does not end in its state "
                        + state.stored());
            } else if (!history.get(0).equals(TransactionState.INITIAL.stored())
                    && !history.get(0).equals(TransactionState.PENDING.stored())) {
                problems.add("transaction " + id + ": history " + history + " starts with " + history.get(0));
            }
            for (int i = 1; i < history.size(); i++) {
                if (!TransactionState.fromStored(history.get(i - 1)).canMoveTo(
                        TransactionState.fromStored(history.get(i)))) {
                    problems.add("transaction " + id + ": illegal transition " + history.get(i - 1) + " -> "
                            + history.get(i) + " in " + history);
                }
            }
            if (!state.isTerminal()) {
                inFlight.add(id);
                continue;
            }
            for (Document p : decode(tx).participants()) {
                terminalByCollection.computeIfAbsent(p.getString(P_COLLECTION), k -> new HashSet<>()).add(id);
                if (state == TransactionState.DONE) {
                    long delta = increments(p.getList(P_PREPARE, Document.class), field)
                            + increments(p.getList(P_COMMIT, Document.class), field);
                    effects.merge(p.getString(P_COLLECTION) + "/" + p.get(P_ID), delta, Long::sum);
                    byDocument.computeIfAbsent(p.getString(P_COLLECTION), k -> new TreeMap<>(Ids.idOrder()))
                            .merge(p.get(P_ID), delta, Long::sum);
                }
            }
        }
        Set<String> collections = new HashSet<>(terminalByCollection.keySet());
        for (String name : collections) {
            for (Document d : store.marked(name)) {
                List<?> applied = Values.arrayOf(d, config.markerField());
                for (Object marked : store.marker().inFlight(d)) {
                    String what = applied.contains(marked) ? "carries" : "is reserved for";
                    if (terminalByCollection.get(name).contains(marked)) {
                        problems.add(name + "/" + d.get("_id") + " still " + what + " terminal transaction " + marked);
                    } else if (!known.contains(marked)) {
                        problems.add(name + "/" + d.get("_id") + " " + what + " unknown transaction " + marked);
                    }
                }
            }
        }
        return new TwoPhaseAudit(problems, inFlight, effects, byDocument);
    }

    static long increments(List<Document> ops, String field) {
        long sum = 0;
        for (Document op : ops) {
            if ("inc".equals(op.getString("op")) && field.equals(op.getString("path"))
                    && op.get("value") instanceof Number n) {
                sum += n.longValue();
            }
        }
        return sum;
    }

    /** The metrics snapshot. */
    @Override
    public TwoPhaseMetrics metrics() {
        return counters.read();
    }
}
