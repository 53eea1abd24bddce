package dev.consistencykit.versioning;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

import org.bson.BsonValue;
import org.bson.Document;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;

import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Values;

/**
 * One committed version of a root's whole tree, exactly as it was committed.
 *
 * @param rootId      the root
 * @param version     the committed version read
 * @param items       every item of that version, by id (ordered by id)
 * @param meta        the document stored with that version's commit, if any
 * @param committedAt when that version was committed (server time), if known
 */
public record VersionedTree(Object rootId, long version, Map<Object, Document> items, Optional<Document> meta,
                            Optional<Instant> committedAt) {

    /** Copies the items, ordered by id. */
    public VersionedTree {
        Objects.requireNonNull(rootId, "rootId");
        // ordered and looked up by MongoDB's equality of ids: item(1) finds the item stored as 1L, item(uuid) the
        // one read back as a Binary
        Map<Object, Document> sorted = new TreeMap<>(VersionedTree::compareIds);
        sorted.putAll(items);
        items = Collections.unmodifiableMap(sorted);
        Objects.requireNonNull(meta, "meta");
        Objects.requireNonNull(committedAt, "committedAt");
    }

    /** Item {@code itemId} in this version, if it exists. */
    public Optional<Document> item(Object itemId) {
        return Optional.ofNullable(items.get(itemId));
    }

    /** {@link #checksumOf} this tree's items. */
    public String checksum() {
        return checksumOf(items);
    }

    /**
     * A checksum of a whole state (item ids and values, independent of map order): store it in a commit's
     * {@link ChangeSet#meta()} and compare it with {@link #checksum()} of what a reader got, to prove the read whole.
     */
    public static String checksumOf(Map<?, Document> items) {
        Map<Object, Document> sorted = new TreeMap<>(VersionedTree::compareIds);
        sorted.putAll(items);
        Hasher hasher = Hashing.sha256().newHasher();
        sorted.forEach((id, value) -> hasher.putString(canonicalId(id), StandardCharsets.UTF_8).putByte((byte) 0)
                .putString(Values.encode(null, "item", value).asDocument().toJson(), StandardCharsets.UTF_8).putByte((byte) 0));
        return hasher.hash().toString().substring(0, 32);
    }

    /** A type-tagged string for an id: {@code s:name}, {@code n:42}, {@code o:<hex>}. */
    public static String canonicalId(Object id) {
        if (id instanceof String s) {
            return "s:" + s;
        }
        if (id instanceof org.bson.types.ObjectId o) {
            return "o:" + o.toHexString();
        }
        // any other id by its BSON value, numbers normalized: 1, 1L and 1.0 are one id, 1.5 is another, and a
        // UUID given by a caller equals the Binary read back
        BsonValue key = Ids.idKey(id);
        if (key.isInt64()) {
            return "n:" + key.asInt64().getValue();
        }
        return "b:" + (key.isDocument() ? key.asDocument().toJson() : key.toString());
    }

    private static int compareIds(Object a, Object b) {
        return canonicalId(a).compareTo(canonicalId(b));
    }
}
