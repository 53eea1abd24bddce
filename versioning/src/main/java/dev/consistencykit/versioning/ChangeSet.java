package dev.consistencykit.versioning;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.bson.Document;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;

/**
 * Puts and deletes of items of one root, based on one committed version of it, committed together or not at all.
 *
 * <p>Immutable. Built by {@link #on(Object, long)}; checked by the store before anything is written (ids, field
 * names, sizes). A delete is stored as a tombstone version of the item; deleting an item that does not exist is
 * allowed and changes nothing a reader sees.
 *
 * <pre>{@code
 * ChangeSet change = ChangeSet.on("catalogue", tree.version())
 *         .put("shoes", new Document("title", "Shoes").append("price", 4_900))
 *         .delete("hats")
 *         .build();
 * }</pre>
 *
 * @param id          the change set's id: retrying with the same id and the same content is idempotent
 * @param rootId      the root it changes
 * @param baseVersion the committed version it was made from; it commits as {@code baseVersion + 1}
 * @param changes     item id to its new value (a document, a record, a POJO), or to an empty value for a delete, in
 *                    the order given
 * @param meta        a small document stored with the commit (a message, a checksum…), or empty
 */
public record ChangeSet(OperationId id, Object rootId, long baseVersion, Map<Object, Optional<Object>> changes,
                        Optional<Document> meta) {

    /** Copies the changes (keeping their order). Content is checked by the store, not here. */
    public ChangeSet {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(changes, "changes");
        Objects.requireNonNull(meta, "meta");
        changes = Collections.unmodifiableMap(new LinkedHashMap<>(changes));
    }

    /** A builder of a change set on {@code rootId} made from committed version {@code baseVersion}. */
    public static Builder on(Object rootId, long baseVersion) {
        return new Builder(rootId, baseVersion);
    }

    /** This change set with another id. */
    public ChangeSet withId(OperationId newId) {
        return new ChangeSet(newId, rootId, baseVersion, changes, meta);
    }

    /** The version this change set commits as. */
    public long version() {
        return baseVersion + 1;
    }

    /** Builds a {@link ChangeSet}. Not thread-safe. */
    public static final class Builder {

        private final Object rootId;
        private final long baseVersion;
        private OperationId id;
        private final Map<Object, Optional<Object>> changes = new LinkedHashMap<>();
        private Document meta;

        private Builder(Object rootId, long baseVersion) {
            this.rootId = rootId;
            this.baseVersion = baseVersion;
        }

        /** The change set's id. Default: a new ObjectId. */
        public Builder id(OperationId value) {
            this.id = Objects.requireNonNull(value, "id");
            return this;
        }

        /**
         * Sets item {@code itemId} to {@code value} (a new item, or a new version of an existing one): a
         * {@link Document}, or any value the database's codec registry encodes as a document (a record, a POJO),
         * encoded when the change set is committed; reads give it back as a {@code Document} or, asked with a type,
         * as that type.
         */
        public Builder put(Object itemId, Object value) {
            changes.put(distinct(normalize(itemId)), Optional.of(Objects.requireNonNull(value, "value")));
            return this;
        }

        /** Deletes item {@code itemId} (a tombstone version). */
        public Builder delete(Object itemId) {
            changes.put(distinct(normalize(itemId)), Optional.empty());
            return this;
        }

        /** A small document stored with the commit and returned by reads of its version. */
        public Builder meta(Document value) {
            this.meta = Objects.requireNonNull(value, "meta");
            return this;
        }

        /** Whether no put or delete was added yet. */
        public boolean isEmpty() {
            return changes.isEmpty();
        }

        /** The change set. */
        public ChangeSet build() {
            return new ChangeSet(id != null ? id : OperationId.random(), rootId, baseVersion, changes,
                    Optional.ofNullable(meta));
        }

        /**
         * {@code itemId}, unless this change set already holds an id Java calls equal that MongoDB does not: documents
         * with the same fields in another order are two ids there (two items), one key of a Java map here, so the
         * second would silently replace the first.
         *
         * @throws InvalidInputException if it holds such an id
         */
        private Object distinct(Object itemId) {
            if (changes.containsKey(itemId)) {
                for (Object held : changes.keySet()) {
                    if (held.equals(itemId)
                            && !VersionedTree.canonicalId(held).equals(VersionedTree.canonicalId(itemId))) {
                        throw new InvalidInputException(VersionedStoreConfig.DEFAULT_NAME, "itemId", "item ids "
                                + held + " and " + itemId + " are two items for MongoDB (field order counts there) but"
                                + " one key of this change set: change them in two change sets");
                    }
                }
            }
            return itemId;
        }

        private static Object normalize(Object itemId) {
            if (itemId instanceof Integer || itemId instanceof Short || itemId instanceof Byte) {
                return ((Number) itemId).longValue();
            }
            return itemId;
        }
    }
}
