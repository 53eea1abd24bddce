package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.twophase.internal.TransactionCodec.SPEC_JSON;
import static dev.consistencykit.twophase.internal.TransactionSchema.CREATED;
import static dev.consistencykit.twophase.internal.TransactionSchema.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionSchema.LABEL;
import static dev.consistencykit.twophase.internal.TransactionSchema.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionSchema.LEASE;
import static dev.consistencykit.twophase.internal.TransactionSchema.OWNER;
import static dev.consistencykit.twophase.internal.TransactionSchema.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_FUNDS;
import static dev.consistencykit.twophase.internal.TransactionSchema.SPEC;
import static dev.consistencykit.twophase.internal.TransactionSchema.STATE;
import static dev.consistencykit.twophase.internal.TransactionSchema.TOKEN;

import java.util.List;
import java.util.function.Supplier;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * Recording the intent: the transaction document, in one write.
 */
final class TransactionRecording {

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final ServerClock clock;
    private final Supplier<String> ownerIds;

    /** The recording of a transaction's intent, through the store; a new record's lease runs on {@code clock}. */
    TransactionRecording(TwoPhaseConfig config, TransactionStore store, ServerClock clock, Supplier<String> ownerIds) {
        this.config = config;
        this.store = store;
        this.clock = clock;
        this.ownerIds = ownerIds;
    }

    // ---------------------------------------------------------------- recording the intent

    record Recorded(boolean inserted, Document existing) {
    }

    /**
     * Records {@code tx} with one upsert whose filter never matches an existing document, so a reused id is a
     * duplicate-key error rather than a change to the existing transaction. The record carries this call's nonce
     * until it is released ({@link RecordReleases}): a retry of this write after its first attempt landed, the
     * transaction finished and a pruner ran must find the record, never insert it again.
     */
    Recorded record(EncodedTransaction tx, TransactionState state, String owner) {
        String nonce = owner != null ? owner : ownerIds.get();
        Document stored = new Document(STATE, state.stored()).append(LABEL, tx.label())
                .append(PARTICIPANTS, tx.index()).append(SPEC, tx.spec()).append(HISTORY, List.of(state.stored()))
                .append(TOKEN, owner == null ? 0L : 1L).append(RecordReleases.FIELD, nonce);
        if (owner != null) {
            stored.append(OWNER, owner).append(LEASE, TransactionSchema.leaseExpiry(clock, config.lease()));
        }
        Bson update = Updates.combine(Updates.setOnInsert(stored), Updates.currentDate(CREATED),
                Updates.currentDate(LAST_MODIFIED));
        Document existing = store.record(tx.id(), update);
        if (existing == null) {
            store.written(tx.id(), nonce);
            return new Recorded(true, null);
        }
        boolean mine = nonce.equals(existing.getString(RecordReleases.FIELD));
        if (mine) {
            store.written(tx.id(), nonce);   // this call's earlier attempt wrote it; its reply was lost
        }
        if (RecordReleases.isCompacted(existing)) {
            // finished and past its retention; kept (compacted) because a call's hold is still on it
            if (mine) {
                return new Recorded(false, existing);   // this call's own: its state and reason are its answer
            }
            throw new IdempotencyConflictException(config.name(), tx.id(), "transaction id " + tx.id()
                    + " was used by a transaction that finished and whose record is kept, compacted, until its writer"
                    + " releases it; nothing was written");
        }
        // found rather than written (perhaps by this call's attempt whose acknowledgement failed): confirm the write
        // concern before going on from it
        store.confirmRecord(tx.id());
        if (!tx.spec().equals(existing.getString(SPEC)) && !sameSteps(tx.spec(), existing.getString(SPEC))) {
            throw new IdempotencyConflictException(config.name(), tx.id(), "transaction id " + tx.id()
                    + " is already used by a transaction with other participants; nothing was written");
        }
        return new Recorded(false, existing);
    }

    /**
     * Whether two specs name the same participants and steps, whichever door recorded them: {@code transfer} marks
     * which precondition means insufficient funds (to word the cancellation), {@code apply} of the same
     * {@code transferTransaction} does not; that mark does not make it another transaction.
     */
    static boolean sameSteps(String a, String b) {
        if (a == null || b == null) {
            return false;
        }
        return withoutFunds(a).equals(withoutFunds(b));
    }

    private static String withoutFunds(String spec) {
        Document parsed = Document.parse(spec);
        for (Document p : parsed.getList(PARTICIPANTS, Document.class, List.of())) {
            p.remove(P_FUNDS);
        }
        return parsed.toJson(SPEC_JSON);
    }

    Document readPrimary(Object id) {
        return store.readPrimary(id);
    }

}
