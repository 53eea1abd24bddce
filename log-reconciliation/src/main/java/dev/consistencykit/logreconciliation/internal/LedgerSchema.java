package dev.consistencykit.logreconciliation.internal;

import org.bson.Document;

import dev.consistencykit.core.spi.Values;

import dev.consistencykit.logreconciliation.LedgerState;

/** The names the ledger stores on a transaction, a change and an account's cache, and how they are read back. */
final class LedgerSchema {

    /** Stored {@code proc} of a transaction not yet committed. */
    static final String UNCOMMITTED = LedgerState.UNCOMMITTED.stored();
    /** Stored {@code proc} of a committed transaction. */
    static final String COMMITTED = LedgerState.COMMITTED.stored();
    /** Stored {@code state} of a transaction whose changes count. */
    static final String VALID = LedgerState.VALID;
    /** Stored {@code state} of a transaction whose changes do not count. */
    static final String CANCELED = LedgerState.CANCELED.stored();

    static final String CHANGES = "changes";
    static final String ACCOUNT = "account";
    static final String SEQ = "seqId";
    /**
     * A change's place in its account's log as one value, {@code "<seqId>:<account>"}: what the unique index keeps
     * unique. One field, so that every server makes one index key per change; a unique index over two fields of one
     * array ({@code changes.account}, {@code changes.seqId}) gets one key per element on MongoDB but one per
     * combination of elements on others (DocumentDB), where it refuses appends MongoDB accepts.
     */
    static final String SEQ_KEY = "k";
    static final String VALUE = "value";
    static final String TYPE = "type";
    static final String CACHE_BAL = "cacheBal";
    static final String BALANCE = "balance";
    static final String HEAD = "head";
    static final String CHECKPOINT = "checkpoint";
    /**
     * The most sequence-number collisions one append survives, within its call's deadline: a bound for a server with
     * no deadline set, far beyond what contention alone produces (each collision moves the append to a number nobody
     * held a moment before).
     */
    static final int MAX_APPEND_ATTEMPTS = 1_000;
    /** How many numbers past the one it collided on an append probes for each account in one indexed read. */
    static final int PROBE_WINDOW = 16;
    static final int MAX_CHAIN = 10_000;

    private LedgerSchema() {
    }

    /** The {@link #SEQ_KEY} of {@code account}'s change at {@code seq}: the seqId's digits end at the colon. */
    static String seqKey(String account, long seq) {
        return seq + ":" + account;
    }

    /** A change as stored: its account, type, signed value and place in the account's log. */
    static Document change(String account, String type, long value, long seq) {
        return new Document(ACCOUNT, account).append(TYPE, type).append(VALUE, value).append(SEQ, seq)
                .append(SEQ_KEY, seqKey(account, seq));
    }

    /** The field of an archived copy's {@code _id} that holds the transaction's own id. */
    static final String ARCHIVED_ID = "tx";

    /**
     * The {@code _id} of {@code tx}'s archived copy: its id with the first change's account and seqId, which no other
     * transaction ever holds. An id may be used again once its transaction left the log (a new transaction), and the
     * archive keeps both; keyed by the id alone, the second archiving would overwrite the first, and the log would no
     * longer back the balances.
     */
    static Document archiveKey(Document tx) {
        Document first = tx.getList(CHANGES, Document.class).get(0);
        return new Document(ARCHIVED_ID, tx.get("_id")).append(ACCOUNT, first.getString(ACCOUNT))
                .append(SEQ, first.getLong(SEQ));
    }

    /** An archived copy as the log held it: under its transaction's own id. */
    static Document fromArchive(Document archived) {
        Document tx = new Document(archived);
        if (archived.get("_id") instanceof Document key) {
            tx.put("_id", key.get(ARCHIVED_ID));
        }
        return tx;
    }

    /**
     * A whole number the ledger keeps on {@code doc} (a cache's seqId or balance, a checkpoint's), 0 where the field is
     * missing. The accounts collection is the user's to write to: anything else there (a double, a decimal, NaN, a
     * string, null) is no number the ledger wrote, and reading it as one (5.0 as 5, a string as 0) would give a
     * balance no log holds; so is a negative seqId or counter (numbers start at 1). It is a
     * {@link ClassCastException}, which a call reports as {@link dev.consistencykit.core.ForeignRecordException}.
     */
    static long longOf(Document doc, String field) {
        if (doc == null || !doc.containsKey(field)) {
            return 0L;
        }
        Object value = doc.get(field);
        if ((value instanceof Long || value instanceof Integer)
                && (field.equals(BALANCE) || ((Number) value).longValue() >= 0)) {
            return ((Number) value).longValue();
        }
        throw new ClassCastException(field + " holds " + Values.show(value) + ", not the whole number the ledger"
                + " writes there");
    }

    static long checkpointSeq(Document cache) {
        return cache != null && cache.get(CHECKPOINT) instanceof Document cp ? longOf(cp, SEQ) : 0L;
    }
}
