package dev.consistencykit.versioning.internal;

import java.util.HashMap;
import java.util.Map;

import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.DocumentCodec;
import org.bson.types.ObjectId;

import com.mongodb.MongoClientSettings;

import dev.consistencykit.versioning.VersionState;

/**
 * The names the versioned store keeps on a root, an item version and a version record, and how a stored value is read
 * back.
 */
final class VersionSchema {

    /** Status name of a staged change set. */
    static final String STAGED = VersionState.STAGED.stored();
    /** Status name of a committed change set. */
    static final String COMMITTED_STATE = VersionState.COMMITTED.stored();
    /** Status name of an abandoned change set. */
    static final String ABANDONED_STATE = VersionState.ABANDONED.stored();

    /** Stored {@code until} of an item version no committed version replaced yet. */
    static final long OPEN = Long.MAX_VALUE;
    /** MongoDB's document size limit (16 MiB on every server version). */
    static final int MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
    /** The largest commit meta document accepted: it is stored in the root until the version is settled. */
    static final int MAX_META_BYTES = 64 * 1024;

    // root fields
    static final String VERSION = "version";
    static final String FLOOR = "floor";
    /**
     * On a root: the floor up to which pruning has deleted everything below it. A pruner raises {@link #FLOOR} first
     * (readers below it are refused from then on), then deletes, then raises this; a pass prunes a root again while
     * this is below the floor, so a pruner that died between the two leaves nothing for good.
     */
    static final String PRUNED = "pruned";
    /**
     * On a root: how many times a settler found it may have written version records below the floor (it slept past
     * another's settling and pruning). Each time it sets {@link #PRUNED} back to 0, so that the next pass deletes them;
     * a pruner marks the root pruned only if this count is still what it read before deleting, so that a mark never
     * covers records written after the deletes it made.
     */
    static final String LATE = "lateRecords";
    static final String PENDING = "pending";
    static final String PENDING_AT = "pendingAt";
    static final String PENDING_COUNT = "pendingCount";
    static final String UNSETTLED = "unsettled";
    static final String UNSETTLED_AT = "unsettledAt";
    static final String UNSETTLED_COUNT = "unsettledCount";
    static final String ABANDONED = "abandoned";
    static final String META = "meta";
    /**
     * The commit time of the root's version, the only one its compare-and-set stamps (a server that stamps two fields
     * of one update may give them times a millisecond apart). The compare-and-set that makes the next version copies
     * it into the version's unsettled entry ({@link #UNSETTLED_AT}), where settlement finds it for the history record,
     * so a version has one commit time however it is read.
     */
    static final String COMMITTED_AT = "committedAt";
    /** The slot of the root's version in {@link #UNSETTLED}: where the next commit copies its time to. */
    static final String SLOT = "slot";
    /**
     * Moved on by clean-up before it deletes the documents of a direct commit whose writer went quiet with the root
     * still at its base: a direct commit matches only the fence it read (absent reads as 0).
     */
    static final String FENCE = "fence";
    /**
     * On a root: its committed tree at {@link #TREE_V}, whole, as {@code [{i: item, v: value}, …]}, written by the
     * compare-and-set that made that version when the writer knew its base tree and the two fit in
     * {@link dev.consistencykit.versioning.VersionedStoreConfig#inlineTreeBytes()}. A reader uses it only while
     * {@code treeV} is the root's version: every other commit leaves it behind (and removes it), so no commit can make
     * it describe a version it is not.
     */
    static final String TREE = "tree";
    /** On a root: the version {@link #TREE} and {@link #UNDO} describe. */
    static final String TREE_V = "treeV";
    /**
     * On a root: what the commit of {@link #TREE_V} replaced, {@code [{i: item, v: value before}]} ({@code v} absent
     * for an item that did not exist), so that the version before is the tree with these applied.
     */
    static final String UNDO = "undo";
    /** On a root: the meta ({@code meta}) and commit time ({@code at}) of the version before {@link #TREE_V}. */
    static final String PRIOR = "prior";
    // inline tree entry fields
    static final String I = "i";
    // attempt entry fields (pending, unsettled, history)
    static final String CS = "cs";
    static final String ATT = "att";
    static final String BASE = "base";
    static final String V = "v";
    static final String N = "n";
    static final String FP = "fp";
    static final String AT = "at";
    // item version fields
    static final String ROOT = "root";
    static final String ITEM = "item";
    static final String COMMITTED = "committed";
    static final String UNTIL = "until";
    static final String DELETED = "deleted";
    static final String VALUE = "value";
    /**
     * The {@code _id} of an item version: what makes it one, so that the server's primary key refuses a second copy
     * (a retry's, or another writer's of the same attempt) by itself. A unique index on these four fields would do
     * the same on MongoDB, but DocumentDB checks such an index at a cost that grows with the documents sharing any one
     * of its values (every tree's version 1), so an insert took 40 ms among 8,000 trees instead of 2
     * (docs/servers.md).
     */
    static Document itemVersionId(Object root, Object item, long version, ObjectId att) {
        return new Document("r", root).append("i", item).append("v", version).append("a", att);
    }

    /**
     * The {@code _id} of a version record, for the same reason as {@link #itemVersionId}: two settlers of one version
     * upsert the same record, and the primary key keeps one. A unique index on {@code root} and {@code v} made each
     * upsert cost in proportion to the roots at that version on DocumentDB: 10 ms among 40,000 roots, against 1 ms by
     * {@code _id} (docs/servers.md).
     */
    static Document historyRecordId(Object root, long version) {
        return new Document("r", root).append("v", version);
    }

    /** On an item version written by a direct commit (not staged on the root first). */
    static final String DIRECT = "direct";

    static final DocumentCodec CODEC = new DocumentCodec(MongoClientSettings.getDefaultCodecRegistry());

    private VersionSchema() {
    }

    /** The staged attempts by slot, each with its staging time ({@code at}) when the root was read with it. */
    static Document pending(Document root) {
        return withTimes(root, PENDING, PENDING_AT);
    }

    /**
     * The unsettled versions by slot, each with its commit time ({@code at}) when the root was read with it: the root's
     * own for its version (when read with {@link #VERSION} and {@link #COMMITTED_AT}), whose time the next commit
     * copies to its entry.
     */
    static Document unsettled(Document root) {
        Document entries = withTimes(root, UNSETTLED, UNSETTLED_AT);
        if (!(root.get(COMMITTED_AT) instanceof java.util.Date committed) || !(root.get(VERSION) instanceof Number)) {
            return entries;
        }
        long version = number(root, VERSION);
        Document out = new Document();
        entries.forEach((slot, value) -> {
            Document entry = (Document) value;
            if (!entry.containsKey(AT) && number(entry, V) == version) {
                entry = new Document(entry).append(AT, committed);
            }
            out.append(slot, entry);
        });
        return out;
    }

    /** Whether {@code slot}, read back from a root, is a slot as this store names them (and so a safe field name). */
    static boolean isSlot(Object slot) {
        return slot instanceof String s && s.matches("c[0-9a-f]{24}");
    }

    static Document withTimes(Document root, String entriesField, String timesField) {
        Document entries = root.get(entriesField, Document.class);
        if (entries == null) {
            return new Document();
        }
        Document times = root.get(timesField, Document.class);
        if (times == null) {
            return entries;
        }
        Document out = new Document();
        entries.forEach((slot, entry) -> {
            Document copy = new Document((Document) entry);
            Object at = times.get(slot);
            if (at != null) {
                copy.append(AT, at);
            }
            out.append(slot, copy);
        });
        return out;
    }

    static Document unsettledEntry(Document root, long version) {
        for (Object value : unsettled(root).values()) {
            if (number((Document) value, V) == version) {
                return (Document) value;
            }
        }
        return null;
    }

    static Map<Long, ObjectId> unsettledAtts(Document root) {
        Map<Long, ObjectId> out = new HashMap<>();
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            out.put(number(entry, V), entry.getObjectId(ATT));
        }
        return out;
    }

    /** The root's fence is {@code fence} (a root written before fences existed has none: that reads as 0). */
    static org.bson.conversions.Bson fenceIs(long fence) {
        return fence == 0 ? com.mongodb.client.model.Filters.in(FENCE, 0L, null)
                : com.mongodb.client.model.Filters.eq(FENCE, fence);
    }

    static long number(Document d, String field) {
        Object v = d.get(field);
        return v == null ? 0 : ((Number) v).longValue();
    }

    static Object normalize(Object id) {
        if (id instanceof Integer || id instanceof Short || id instanceof Byte) {
            return ((Number) id).longValue();
        }
        return id;
    }

    static int encodedSize(Document d) {
        return new RawBsonDocument(d, CODEC).getByteBuffer().remaining();
    }
}
