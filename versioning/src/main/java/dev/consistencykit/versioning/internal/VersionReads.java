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
import static dev.consistencykit.versioning.internal.VersionSchema.FENCE;
import static dev.consistencykit.versioning.internal.VersionSchema.FLOOR;
import static dev.consistencykit.versioning.internal.VersionSchema.ITEM;
import static dev.consistencykit.versioning.internal.VersionSchema.META;
import static dev.consistencykit.versioning.internal.VersionSchema.N;
import static dev.consistencykit.versioning.internal.VersionSchema.PRIOR;
import static dev.consistencykit.versioning.internal.VersionSchema.TREE;
import static dev.consistencykit.versioning.internal.VersionSchema.TREE_V;
import static dev.consistencykit.versioning.internal.VersionSchema.UNDO;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_AT;
import static dev.consistencykit.versioning.internal.VersionSchema.UNSETTLED_COUNT;
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
    /** Whether a read looks for the tree its root carries ({@link VersionSchema#TREE}) before it aggregates. */
    private final boolean inline;
    private final VersionStore store;
    private final VersionCounters counters;

    /** The reads, through the store. */
    VersionReads(String name, boolean inline, VersionStore store, VersionCounters counters) {
        this.name = name;
        this.inline = inline;
        this.store = store;
        this.counters = counters;
    }

    /** What a read of the current version uses of a root that carries its tree. */
    private static final String[] CURRENT_FIELDS = {VERSION, FLOOR, FENCE, UNSETTLED_COUNT, META, COMMITTED_AT, TREE,
        TREE_V, VersionSchema.SLOT};
    /** What a read of the current version alone uses of a root that carries its tree. */
    private static final String[] READ_FIELDS = {VERSION, META, COMMITTED_AT, TREE, TREE_V};
    /** What a read as of a version uses of a root that carries its tree and what its last commit replaced. */
    private static final String[] AS_OF_FIELDS = {VERSION, FLOOR, META, COMMITTED_AT, TREE, TREE_V, UNDO, PRIOR};

    /** The root's {@code fields}, by {@code _id}: one round trip. */
    private Document rootCarrying(Object id, String... fields) {
        Document root = store.root(id, "read root", fields);
        if (root == null) {
            throw new UnknownRootException(name, id);
        }
        return root;
    }

    /**
     * The tree the root carries, when it is the tree of the root's version ({@link VersionSchema#TREE_V}); null when
     * it carries none, an older one, or one that is not as this store writes it (a root is read back as input).
     */
    static Map<Object, Document> carriedTree(Document root) {
        if (!(root.get(TREE_V) instanceof Number treeVersion) || !(root.get(VERSION) instanceof Number version)
                || treeVersion.longValue() != version.longValue()) {
            return null;
        }
        return entries(root.get(TREE), true);
    }

    /**
     * {@code value}'s entries {@code {i: item, v: value}} by item, null unless it is a list of such; {@code v} may be
     * absent only where {@code valued} is false (then the item maps to null).
     */
    private static Map<Object, Document> entries(Object value, boolean valued) {
        if (!(value instanceof List<?> list)) {
            return null;
        }
        Map<Object, Document> out = new TreeMap<>(java.util.Comparator.comparing(VersionedTree::canonicalId));
        for (Object element : list) {
            if (!(element instanceof Document entry) || !entry.containsKey(VersionSchema.I)) {
                return null;
            }
            Object v = entry.get(V);
            if (v == null ? valued : !(v instanceof Document)) {
                return null;
            }
            out.put(entry.get(VersionSchema.I), (Document) v);
        }
        return out;
    }

    /**
     * The tree of the version before the one the root carries: that tree with what its last commit replaced put
     * back, and that version's meta and commit time; null when the root does not carry both.
     */
    static VersionedTree carriedPrior(Object id, Document root) {
        Map<Object, Document> tree = carriedTree(root);
        Map<Object, Document> undo = entries(root.get(UNDO), false);
        if (tree == null || undo == null || !(root.get(PRIOR) instanceof Document prior)
                || !(prior.get(META) == null || prior.get(META) instanceof Document)
                || !(prior.get(AT) == null || prior.get(AT) instanceof Date)) {
            return null;
        }
        undo.forEach((item, before) -> {
            tree.remove(item);
            if (before != null) {
                tree.put(item, before);
            }
        });
        return new VersionedTree(id, number(root, VERSION) - 1, tree, Optional.ofNullable(prior.get(META,
                Document.class)), Optional.ofNullable(prior.getDate(AT)).map(Date::toInstant));
    }

    // ---------------------------------------------------------------- read

    /** How often a read starts again because retention pruned what it was reading. */
    static final int MAX_READ_ATTEMPTS = 16;

    /**
     * The committed tree at the root's current version, with what a direct commit made from it needs: one round trip
     * (the root, when it carries the tree of its version; otherwise one more: one aggregation, which reads the root,
     * then the item versions that may be visible, then the root's floor again). If retention pruned the version while
     * its items were being read (a pruner in another process, whatever its own settings), the tree read may be
     * partial, so the read starts again at the then current version.
     */
    public Current current(Object rootId) {
        return current(rootId, CURRENT_FIELDS);
    }

    /** {@link #current(Object)}, reading {@code fields} of a root that carries its tree. */
    private Current current(Object rootId, String... fields) {
        Object id = store.rootId(rootId);
        if (inline) {
            Document root = rootCarrying(id, fields);
            Map<Object, Document> carried = carriedTree(root);
            if (carried != null) {
                counters.treeReads.increment();
                return new Current(new VersionedTree(id, number(root, VERSION), carried,
                        Optional.ofNullable(root.get(META, Document.class)),
                        Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant)),
                        number(root, FENCE), (int) number(root, UNSETTLED_COUNT), root.get(VersionSchema.SLOT));
            }
        }
        for (int attempt = 1; ; attempt++) {
            VersionStore.TreeRead read = readTree(id, null, null);
            Document root = read.root();
            long version = number(root, VERSION);
            Map<Object, Document> tree = visibleItems(read.items(), unsettledAtts(root));
            if (stillAbove(id, version, read.floorAfter(), attempt)) {
                counters.treeReads.increment();
                return new Current(new VersionedTree(id, version, tree,
                        Optional.ofNullable(root.get(META, Document.class)),
                        Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant)),
                        number(root, FENCE), (int) number(root, UNSETTLED_COUNT), root.get(VersionSchema.SLOT));
            }
        }
    }

    /**
     * A tree read at the root's current version, with the root's fence, its count of unsettled versions and the slot
     * of its version as read with it: what {@link VersionWrites#commitDirect} needs.
     */
    public record Current(VersionedTree tree, long fence, int unsettledCount, Object slot) {
    }

    /** The committed tree at the root's current version: one round trip ({@link #current}). */
    public VersionedTree read(Object rootId) {
        return current(rootId, READ_FIELDS).tree();
    }

    VersionStore.TreeRead readTree(Object id, Long version, Object item) {
        return found(id, store.readTree(id, version, item));
    }

    /** {@code read}, unless there was no root {@code id} to read. */
    VersionStore.TreeRead found(Object id, VersionStore.TreeRead read) {
        if (read == null) {
            throw new UnknownRootException(name, id);
        }
        return read;
    }

    /**
     * Whether {@code version} is still at or above the root's floor as read after its items; false means that
     * retention pruned it meanwhile and a current read must start again.
     *
     * @throws VersionPrunedException when reads kept being overtaken by pruning
     */
    boolean stillAbove(Object id, long version, long floor, int attempt) {
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

    /**
     * The committed tree as of {@code version}: one round trip (the root, when it carries the tree of that version or
     * of the one after it; otherwise one more: the root, the history record of that version, the item versions that
     * may be visible at it, the root's floor again).
     */
    public VersionedTree readAsOf(Object rootId, long version) {
        Object id = store.rootId(rootId);
        if (version < 0) {
            throw new InvalidInputException(name, "version", "version must be >= 0, was " + version);
        }
        if (inline) {
            Document root = rootCarrying(id, AS_OF_FIELDS);
            checkAnswerable(id, root, version);
            long current = number(root, VERSION);
            Map<Object, Document> carried = version == current ? carriedTree(root) : null;
            VersionedTree prior = version == current - 1 ? carriedPrior(id, root) : null;
            if (carried != null) {
                counters.treeReads.increment();
                return treeAsOf(id, version, carried, root, null);
            }
            if (prior != null) {
                counters.treeReads.increment();
                return prior;
            }
        }
        VersionStore.TreeRead read = readTree(id, version, null);
        Document root = read.root();
        checkAnswerable(id, root, version);
        Map<Object, Document> tree = visibleItems(read.items(), unsettledAtts(root));
        if (version < read.floorAfter()) {
            // pruned while its items were read: the tree may be partial, so it is not returned
            throw new VersionPrunedException(name, id, version, read.floorAfter());
        }
        counters.treeReads.increment();
        Document entry = unsettledEntry(root, version);
        if (entry == null) {
            // settled before the root was read: its record was written before it left the root
            entry = read.record();
        }
        return treeAsOf(id, version, tree, root, entry);
    }

    /**
     * The tree read as of {@code version}, with its meta and commit time: the root's when it is the root's version,
     * otherwise {@code entry}'s (its unsettled entry on the root, or its history record; null if neither was read).
     */
    static VersionedTree treeAsOf(Object id, long version, Map<Object, Document> tree, Document root,
                                  Document entry) {
        if (version == number(root, VERSION)) {
            return new VersionedTree(id, version, tree, Optional.ofNullable(root.get(META, Document.class)),
                    Optional.ofNullable(root.getDate(COMMITTED_AT)).map(Date::toInstant));
        }
        return new VersionedTree(id, version, tree, Optional.ofNullable(entry).map(e -> e.get(META, Document.class)),
                Optional.ofNullable(entry).map(e -> e.getDate(AT)).map(Date::toInstant));
    }

    /**
     * The committed tree as it was at {@code at} (server time of commits): the newest version committed at or before
     * it, version 0 (the empty root) when none was. One round trip: the root, the history record of the newest settled
     * version committed by then, the item versions that may be visible from that version to the root's, the root's
     * floor again. Which version that is, the root's commit times and the record tell; a commit's time is the
     * server's, stamped by the compare-and-set that made it.
     */
    public VersionedTree readAsOf(Object rootId, Instant at) {
        Object id = store.rootId(rootId);
        if (at == null) {
            throw new InvalidInputException(name, "at", "the time to read as of must not be null");
        }
        VersionStore.TreeRead read = found(id, store.readTreeAt(id, Date.from(at)));
        Document root = read.root();
        long floor = Math.max(number(root, FLOOR), read.floorAfter() == Long.MAX_VALUE ? 0 : read.floorAfter());
        Document record = read.record();
        // the newest version committed by then: the root's, an unsettled one's, or the newest settled one's
        long version = -1;
        Document entry = null;
        Date committed = root.getDate(COMMITTED_AT);
        if (committed != null && !committed.toInstant().isAfter(at)) {
            version = number(root, VERSION);
        } else {
            for (Object value : unsettled(root).values()) {
                Document e = (Document) value;
                Date when = e.getDate(AT);
                if (when != null && !when.toInstant().isAfter(at) && number(e, V) > version) {
                    version = number(e, V);
                    entry = e;
                }
            }
            if (record != null && number(record, V) > version) {
                version = number(record, V);
                entry = record;
            }
        }
        if (version < 0) {
            if (floor > 0) {
                // committed before the oldest version kept, or before the root's first: either way not kept
                throw new VersionPrunedException(name, id, floor - 1, floor);
            }
            version = 0;
        }
        if (version < floor) {
            throw new VersionPrunedException(name, id, version, floor);
        }
        long v = version;
        List<Document> candidates = read.items().stream().filter(d -> number(d, VERSION) <= v
                && number(d, VersionSchema.UNTIL) > v).toList();
        Map<Object, Document> tree = visibleItems(candidates, unsettledAtts(root));
        counters.treeReads.increment();
        return treeAsOf(id, version, tree, root, entry);
    }

    void checkAnswerable(Object id, Document root, long version) {
        long current = number(root, VERSION);
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
     * Item {@code itemId} at the root's current version: one round trip (the root, when it carries the tree of its
     * version; otherwise one more: the root, the item's versions that may be visible, the root's floor again, so that
     * a version pruned meanwhile is never answered from a partial read).
     */
    public Optional<Document> get(Object rootId, Object itemId) {
        Object id = store.rootId(rootId);
        Object item = normalize(Ids.documentId(name, "itemId", itemId, store.codecs()));
        if (inline) {
            Map<Object, Document> carried = carriedTree(rootCarrying(id, VERSION, TREE, TREE_V));
            if (carried != null) {
                return Optional.ofNullable(carried.get(item));
            }
        }
        for (int attempt = 1; ; attempt++) {
            VersionStore.TreeRead read = readTree(id, null, item);
            Document root = read.root();
            long version = number(root, VERSION);
            // every version read is of this item by the server's equality of ids (a UUID read back as the value the
            // codecs decode it to is not equal to the id asked for in Java): take the visible one, not a lookup
            Document found = visibleItems(read.items(), unsettledAtts(root)).values().stream().findFirst()
                    .orElse(null);
            if (stillAbove(id, version, read.floorAfter(), attempt)) {
                return Optional.ofNullable(found);
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
     * For each item: its newest version among {@code itemVersions} (those that may be visible at the version read)
     * that the root commits. Newest first, so that a version replaced by a newer committed one is never shown.
     */
    static Map<Object, Document> visibleItems(List<Document> itemVersions, Map<Long, ObjectId> unsettled) {
        List<Document> newestFirst = new ArrayList<>(itemVersions);
        newestFirst.sort((a, b) -> Long.compare(number(b, VERSION), number(a, VERSION)));
        // keyed and decided by MongoDB's equality of ids, not Java's (a document id's field order counts there)
        Map<Object, Document> tree = new TreeMap<>(java.util.Comparator.comparing(VersionedTree::canonicalId));
        Set<Object> decided = new HashSet<>();
        for (Document d : newestFirst) {
            Object item = d.get(ITEM);
            Object key = Ids.idKey(item);
            if (decided.contains(key) || !visible(d, unsettled)) {
                continue;
            }
            decided.add(key);
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
