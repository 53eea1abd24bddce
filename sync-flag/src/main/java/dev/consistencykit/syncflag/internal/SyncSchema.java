package dev.consistencykit.syncflag.internal;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncState;

/** The names the sync flag stores on a master and its copies, and how a stored value is read back. */
final class SyncSchema {

    /** State of an operation whose propagation is pending: its flag is on its master. */
    static final String SYNCING = SyncState.SYNCING.stored();
    /** State of an operation whose copies are in step (or carried by a newer update's propagation). */
    static final String SYNCED = SyncState.SYNCED.stored();

    /** The flag of the update whose propagation is pending: {@code {op, at}}. */
    static final String FLAG = SyncFlagConfig.FLAG_FIELD;
    static final String FLAG_OP = FLAG + ".op";
    static final String FLAG_AT = FLAG + ".at";
    /** The master's version, copied with its values. */
    static final String VERSION = SyncFlagConfig.VERSION_FIELD;
    /** The ids (and fingerprints) of the master's remembered updates: {@code [{id, h}]}. */
    static final String OPS = SyncFlagConfig.OPS_FIELD;
    /** The fingerprint of a resync, which changes no value. */
    static final String RESYNC_FINGERPRINT = "resync";
    /** The array filter's name for the element of an array target. */
    static final String ELEMENT = "e";
    /** How an update's fingerprint writes its id and update. */
    static final JsonWriterSettings CANONICAL = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();

    private SyncSchema() {
    }

    static long versionOf(Document master) {
        Object v = master.get(VERSION);
        return v instanceof Number n ? n.longValue() : 0L;
    }

    /** A master field's value: absent, or present (possibly {@code null}). */
    record Value(boolean present, Object value) {
    }

    /** The value at a dotted path through subdocuments; absent when a segment is missing or not a subdocument. */
    static Value valueAt(Document document, String path) {
        Object current = document;
        for (String segment : com.google.common.base.Splitter.on('.').split(path)) {
            if (!(current instanceof Document d) || !d.containsKey(segment)) {
                return new Value(false, null);
            }
            current = d.get(segment);
        }
        return new Value(true, current);
    }
}
