package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.twophase.internal.TransactionCodec.SPEC_JSON;
import static dev.consistencykit.twophase.internal.TransactionFields.CREATED;
import static dev.consistencykit.twophase.internal.TransactionFields.HISTORY;
import static dev.consistencykit.twophase.internal.TransactionFields.LABEL;
import static dev.consistencykit.twophase.internal.TransactionFields.LAST_MODIFIED;
import static dev.consistencykit.twophase.internal.TransactionFields.LEASE;
import static dev.consistencykit.twophase.internal.TransactionFields.OWNER;
import static dev.consistencykit.twophase.internal.TransactionFields.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionFields.P_FUNDS;
import static dev.consistencykit.twophase.internal.TransactionFields.SPEC;
import static dev.consistencykit.twophase.internal.TransactionFields.STATE;
import static dev.consistencykit.twophase.internal.TransactionFields.TOKEN;

import java.util.List;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.core.spi.RecordReleases;
import dev.consistencykit.core.spi.WriteConcerns;
import dev.consistencykit.twophase.TransactionState;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.internal.TransactionEngine.Encoded;

/**
 * Recording the intent: the transaction document, in one write.
 */
final class TransactionRecording {

    private final TransactionFields fields;
    private final TwoPhaseConfig config;

    /** The store of transaction records, over the shared fields. */
    TransactionRecording(TransactionFields fields) {
        this.fields = fields;
        this.config = fields.config;
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
    Recorded record(Encoded tx, TransactionState state, String owner) {
        String nonce = owner != null ? owner : fields.ownerIds.get();
        Document stored = new Document(STATE, state.stored()).append(LABEL, tx.label())
                .append(PARTICIPANTS, tx.index()).append(SPEC, tx.spec()).append(HISTORY, List.of(state.stored()))
                .append(TOKEN, owner == null ? 0L : 1L).append(RecordReleases.FIELD, nonce);
        if (owner != null) {
            stored.append(OWNER, owner).append(LEASE, fields.leaseExpiry());
        }
        Bson update = Updates.combine(Updates.setOnInsert(stored), Updates.currentDate(CREATED),
                Updates.currentDate(LAST_MODIFIED));
        Document existing = config.retryPolicy().execute(config.name(), tx.id(), "record transaction", () -> {
            try {
                UpdateResult r = fields.transactions.updateOne(and(eq("_id", tx.id()), exists(STATE, false)), update,
                        new UpdateOptions().upsert(true));
                if (r.getUpsertedId() != null) {
                    return null;
                }
                throw new ConsistencyException(config.name(), tx.id(), "recording the transaction matched an"
                        + " existing document without a state; the transactions collection holds foreign data");
            } catch (MongoException e) {
                if (!MongoErrors.isDuplicateKey(e)) {
                    throw e;
                }
                return readPrimary(tx.id());
            }
        });
        if (existing == null) {
            fields.releases.written(tx.id(), nonce);
            return new Recorded(true, null);
        }
        boolean mine = nonce.equals(existing.getString(RecordReleases.FIELD));
        if (mine) {
            fields.releases.written(tx.id(), nonce);   // this call's earlier attempt wrote it; its reply was lost
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
        config.retryPolicy().run(config.name(), tx.id(), "confirm record",
                () -> WriteConcerns.confirm(fields.transactions, tx.id(), config.name(), "record transaction"));
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
        return fields.transactions.withReadPreference(ReadPreference.primary()).find(eq("_id", id)).first();
    }

}
