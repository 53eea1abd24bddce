package dev.consistencykit.versioning.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.versioning.internal.VersionSchema.AT;
import static dev.consistencykit.versioning.internal.VersionSchema.ATT;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED;
import static dev.consistencykit.versioning.internal.VersionSchema.COMMITTED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.CS;
import static dev.consistencykit.versioning.internal.VersionSchema.DELETED;
import static dev.consistencykit.versioning.internal.VersionSchema.FLOOR;
import static dev.consistencykit.versioning.internal.VersionSchema.ITEM;
import static dev.consistencykit.versioning.internal.VersionSchema.META;
import static dev.consistencykit.versioning.internal.VersionSchema.N;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.V;
import static dev.consistencykit.versioning.internal.VersionSchema.VALUE;
import static dev.consistencykit.versioning.internal.VersionSchema.VERSION;
import static dev.consistencykit.versioning.internal.VersionSchema.normalize;
import static dev.consistencykit.versioning.internal.VersionSchema.number;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettled;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettledAtts;
import static dev.consistencykit.versioning.internal.VersionSchema.unsettledEntry;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.bson.Document;
import org.bson.types.ObjectId;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.versioning.ItemVersion;
import dev.consistencykit.versioning.UnknownRootException;
import dev.consistencykit.versioning.VersionInfo;
import dev.consistencykit.versioning.VersionPrunedException;
import dev.consistencykit.versioning.VersionedTree;

/**
 * The reads: one committed version of a tree, an item's history, time travel and diffs, each checked against the
 * root's floor.
 */
public final class VersionReads {

    private static final Logger LOG = LoggerFactory.getLogger(VersionReads.class);

    private final String name;
    private final VersionStore store;
    private final VersionCounters counters;

    /** The reads, through the store. */
    VersionReads(String name, VersionStore store, VersionCounters counters) {
        this.name = name;
        this.store = store;
        this.counters = counters;
    }

    // ---------------------------------------------------------------- read

    /** How often a read starts again because retention pruned what it was reading. */
    static final int MAX_READ_ATTEMPTS = 16;

    /**
     * The committed tree at the root's current version: three round trips. The root, the items, and the root's floor
     * again: if retention pruned the version while its items were being read (a pruner in another process, whatever
     * its own settings), the tree read may be partial, so the read starts again at the then current version.
     */
    public VersionedTree read(Object rootId) {
        Object id = store.rootId(rootId);
        for (int attempt = 1; ; attempt++) {
            Document root = findRootForRead(id);
            long version = number(root, VERSION);
            Map<Object, Document> tree = visibleItems(id, version, unsettledAtts(root));
            if (stillAbove(id, version, attempt)) {
                counters.treeReads.increment();
                return new VersionedTree(id, version, tree, Optional.ofNullable(root.get(META, Document.class)),
                        Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant));
            }
        }
    }

    /**
     * Whether {@code version} is still at or above the root's floor, after its items were read; false means that
     * retention pruned it meanwhile and a current read must start again.
     *
     * @throws VersionPrunedException when reads kept being overtaken by pruning
     */
    boolean stillAbove(Object id, long version, int attempt) {
        Document again = store.root(id, "re-read root floor", FLOOR);
        if (again == null) {
            throw new UnknownRootException(name, id);
        }
        long floor = number(again, FLOOR);
        if (version >= floor) {
            return true;
        }
        LOG.debug("[{}] root {}: version {} was pruned (floor {}) while it was read; reading again", name, id,
                version, floor);
        if (attempt >= MAX_READ_ATTEMPTS) {
            throw new VersionPrunedException(name, id, version, floor);
        }
        return false;
    }

    /** The committed tree as of {@code version}: three round trips (four for the meta of a settled version). */
    public VersionedTree readAsOf(Object rootId, long version) {
        Object id = store.rootId(rootId);
        Document root = findRootForRead(id);
        long current = number(root, VERSION);
        checkAnswerable(id, root, version);
        Map<Object, Document> tree = visibleItems(id, version, unsettledAtts(root));
        Document again = store.root(id, "re-read root floor", FLOOR);
        long floor = again == null ? Long.MAX_VALUE : number(again, FLOOR);
        if (version < floor) {
            // pruned while its items were read: the tree may be partial, so it is not returned
            throw new VersionPrunedException(name, id, version, floor);
        }
        counters.treeReads.increment();
        if (version == current) {
            return new VersionedTree(id, version, tree, Optional.ofNullable(root.get(META, Document.class)),
                    Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant));
        }
        Document entry = unsettledEntry(root, version);
        if (entry == null) {
            entry = store.recordOfVersion(id, id, version, "read version record");
        }
        Optional<Document> meta = entry == null ? Optional.empty() : Optional.ofNullable(entry.get(META, Document
                .class));
        Optional<Instant> at = entry == null ? Optional.empty() : Optional.ofNullable(entry.getDate(AT))
                .map(Date::toInstant);
        return new VersionedTree(id, version, tree, meta, at);
    }

    void checkAnswerable(Object id, Document root, long version) {
        long current = number(root, VERSION);
        if (version < 0) {
            throw new InvalidInputException(name, "version", "version must be >= 0, was " + version);
        }
        if (version > current) {
            throw new InvalidInputException(name, "version", "version " + version + " is ahead of root " + id
                    + "'s committed version " + current);
        }
        long floor = number(root, FLOOR);
        if (version < floor) {
            throw new VersionPrunedException(name, id, version, floor);
        }
    }

    /**
     * Item {@code itemId} at the root's current version: three round trips (the root, the item's versions, the root's
     * floor again, so that a version pruned meanwhile is never answered from a partial read).
     */
    public Optional<Document> get(Object rootId, Object itemId) {
        Object id = store.rootId(rootId);
        Object item = normalize(Ids.documentId(name, "itemId", itemId, store.codecs()));
        for (int attempt = 1; ; attempt++) {
            Document root = findRootForRead(id);
            long version = number(root, VERSION);
            Map<Long, ObjectId> unsettled = unsettledAtts(root);
            Optional<Document> found = Optional.empty();
            for (Document d : store.itemVersionsNewestFirst(id, item, version)) {
                if (visible(d, unsettled)) {
                    found = d.getBoolean(DELETED, false) ? Optional.empty() : Optional.of(d.get(VALUE, Document.class));
                    break;
                }
            }
            if (stillAbove(id, version, attempt)) {
                return found;
            }
        }
    }

    /** Every committed version of {@code itemId} still kept, oldest first. */
    public List<ItemVersion> history(Object rootId, Object itemId) {
        Object id = store.rootId(rootId);
        Object item = normalize(Ids.documentId(name, "itemId", itemId, store.codecs()));
        Document root = findRootForRead(id);
        Map<Long, ObjectId> unsettled = unsettledAtts(root);
        long current = number(root, VERSION);
        List<ItemVersion> out = new ArrayList<>();
        for (Document d : store.itemVersionsOldestFirst(id, item, current)) {
            if (visible(d, unsettled)) {
                out.add(new ItemVersion(item, number(d, VERSION), d.getBoolean(DELETED, false) ? Optional.empty()
                        : Optional.of(d.get(VALUE, Document.class)), d.get(CS)));
            }
        }
        return out;
    }

    /** Every committed version still kept (from the floor on), oldest first. Version 0 has no record. */
    public List<VersionInfo> versions(Object rootId) {
        Object id = store.rootId(rootId);
        Document root = findRootForRead(id);
        long floor = number(root, FLOOR);
        TreeMap<Long, VersionInfo> out = new TreeMap<>();
        for (Document record : store.recordsFrom(id, floor)) {
            out.put(number(record, V), versionInfo(record));
        }
        for (Object value : unsettled(root).values()) {
            Document entry = (Document) value;
            if (number(entry, V) >= floor) {
                out.putIfAbsent(number(entry, V), versionInfo(entry));
            }
        }
        return List.copyOf(out.values());
    }

    static VersionInfo versionInfo(Document entry) {
        return new VersionInfo(number(entry, V), entry.get(CS), (int) number(entry, N),
                Optional.ofNullable(entry.getDate(AT)).map(Date::toInstant),
                Optional.ofNullable(entry.get(META, Document.class)));
    }

    /**
     * For each item: its newest version at or below {@code version} that the root commits, unless a committed version
     * at or below {@code version} replaced it. Newest first, so that a concurrent prune (which deletes older documents
     * before newer ones) can never show an older value without the newer tombstone.
     */
    Map<Object, Document> visibleItems(Object rootId, long version, Map<Long, ObjectId> unsettled) {
        Map<Object, Document> tree = new HashMap<>();
        Set<Object> decided = new HashSet<>();
        for (Document d : store.itemsVisibleAt(rootId, version, ITEM, VERSION, ATT, COMMITTED, DELETED, VALUE)) {
            Object item = d.get(ITEM);
            if (decided.contains(item) || !visible(d, unsettled)) {
                continue;
            }
            decided.add(item);
            if (!d.getBoolean(DELETED, false)) {
                tree.put(item, d.get(VALUE, Document.class));
            }
        }
        return tree;
    }

    static boolean visible(Document itemVersion, Map<Long, ObjectId> unsettled) {
        if (itemVersion.getBoolean(COMMITTED, false)) {
            return true;
        }
        ObjectId att = unsettled.get(number(itemVersion, VERSION));
        return att != null && att.equals(itemVersion.getObjectId(ATT));
    }

    Document findRootForRead(Object id) {
        Document root = store.root(id, "read root", VERSION, FLOOR, UNSETTLED, UNSETTLED_AT, META, COMMITTED_AT);
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

}
