package dev.consistencykit.syncflag.internal;

import java.util.List;
import java.util.Optional;

import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import com.mongodb.client.model.Filters;

import dev.consistencykit.core.spi.Values;
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

    /** The types a version may have: a whole number, as the {@code $inc}s and {@code $set}s of this pattern write it. */
    static final List<String> WHOLE_NUMBERS = List.of("int", "long");

    /** A {@code field} that holds a whole number, not an array of them: a version. */
    static Bson wholeVersion(String field) {
        return Filters.and(Filters.not(Filters.type(field, "array")), new Document(field, new Document("$type",
                WHOLE_NUMBERS)));
    }

    /**
     * A master whose version a flagged update can count on: none yet, or a whole number (not an array of them) below
     * the top of its range.
     */
    static Bson countableVersion() {
        return Filters.or(Filters.exists(VERSION, false), Filters.and(wholeVersion(VERSION),
                Filters.lt(VERSION, Long.MAX_VALUE)));
    }

    /** What a master read back holds as its version when {@link #countableVersion} refuses it; empty if not. */
    static Optional<String> uncountableVersion(Document master) {
        if (!master.containsKey(VERSION)) {
            return Optional.empty();
        }
        Object v = master.get(VERSION);
        boolean whole = v instanceof Integer || (v instanceof Long l && l < Long.MAX_VALUE);
        return whole ? Optional.empty() : Optional.of(Values.show(v));
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
