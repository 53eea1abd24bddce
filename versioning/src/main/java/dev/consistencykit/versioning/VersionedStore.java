package dev.consistencykit.versioning;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.Guarantees;
import dev.consistencykit.core.IdempotencyConflictException;
import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.MaintenanceStep;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationInterruptedException;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.StrategyEntry;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.versioning.internal.VersionMaintenance;
import dev.consistencykit.versioning.internal.VersionParts;
import dev.consistencykit.versioning.internal.VersionReads;
import dev.consistencykit.versioning.internal.VersionSettlement;
import dev.consistencykit.versioning.internal.VersionStore;
import dev.consistencykit.versioning.internal.VersionWrites;

/**
 * Versioned documents: a root and its items, changed by change sets that readers see whole or not at all.
 *
 * <p>A change set's items are written as new version documents, then committed by one compare-and-set on the root
 * ({@link #update}: the read and two writes; {@link #commit}: a stage and two writes). The compare-and-set also
 * writes the tree it commits onto the root, whole, with what it replaced, while the two fit in
 * {@link VersionedStoreConfig#inlineTreeBytes()}: a read of the current version, of the one before it or of one item
 * is then that one document, read by {@code _id} (one round trip). Otherwise a reader reads the root, then the item
 * versions that root commits, and the root again, in one aggregation (one round trip): it sees exactly one committed
 * version of the whole tree, never part of a change set, never one that lost a race or whose writer crashed, and it
 * never waits for a writer. The package documentation explains how.
 *
 * <p><b>What it guarantees.</b> Per root, versions are committed one at a time: 1, 2, 3…, each exactly one change
 * set made from the version before it; a writer whose base version moved gets a {@link VersionConflictException} and
 * nothing of it is visible ({@link #update} re-reads and retries). Writers on different roots never wait for each
 * other. A change set staged by a writer that went quiet is committed by {@link #recover} if the root is still at its
 * base and all its documents are written, and abandoned otherwise. Safety never depends on clocks.
 *
 * <p><b>Maintenance.</b> Run {@link #recover()} periodically (from any number of processes): it decides stale change
 * sets, settles committed versions (so reads skip history), deletes abandoned documents and applies the retention
 * policy. A writer settles its root itself once {@link VersionedStoreConfig#settleThreshold()} versions are
 * unsettled, so roots stay small without it; abandoned documents and history need it.
 *
 * <p>Thread-safe; any number of instances in any number of processes may share the collections.
 *
 * <pre>{@code
 * VersionedStore store = VersionedStore.builder(db).retention(Retention.keepLast(100)).build();
 * store.ensureIndexes();
 * store.createRoot("catalogue");
 * VersionedTree tree = store.read("catalogue");                   // version 0, no items
 * store.commit(ChangeSet.on("catalogue", tree.version())
 *         .put("shoes", new Document("price", 4_900)).put("hats", new Document("price", 1_500)).build());
 * store.update("catalogue", (current, change) -> change.delete("hats"));   // re-reads and retries on conflict
 * VersionedTree v1 = store.readAsOf("catalogue", 1);              // time travel
 * }</pre>
 */
public final class VersionedStore extends StrategyEntry<ChangeSet, VersionedStoreConfig, VersionedStoreMetrics> {

    private final VersionStore store;
    private final VersionWrites writes;
    private final VersionReads reads;
    private final VersionSettlement settlement;
    private final VersionMaintenance maintenance;
    /** The database's codecs: what encodes the application's items and decodes them for a typed read. */
    private final CodecRegistry codecRegistry;

    private VersionedStore(VersionedStoreConfig config, Calls calls, VersionParts parts,
                           CodecRegistry codecRegistry) {
        super(config, calls, parts.store(), parts.maintenance(), parts.audit());
        this.store = parts.store();
        this.writes = parts.writes();
        this.reads = parts.reads();
        this.settlement = parts.settlement();
        this.maintenance = parts.maintenance();
        this.codecRegistry = codecRegistry;
    }

    /** A builder for a store on {@code database}. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(database);
    }

    /**
     * A builder per instance of this pattern that registered itself in {@code database} (from its
     * {@code ensureIndexes()}), with its name, collections and fields and every other setting at its default: how an
     * operator's tool rebuilds an instance without the application's code. A registration this pattern did not write
     * is skipped and logged, not obeyed.
     */
    public static List<Builder> registered(MongoDatabase database) {
        return PatternRegistry.builders(database, "versioning", Set.of("roots", "items", "history"), Set.of(),
                r -> builder(database).name(r.name())
                        .collections(r.collections().get("roots"), r.collections().get("items"),
                                r.collections().get("history")));
    }

    /** A store with the defaults. */
    public static VersionedStore on(MongoDatabase database) {
        return builder(database).build();
    }

    /**
     * Creates root {@code rootId} at version 0 with no items. Idempotent.
     *
     * @return false if it already existed
     * @throws InvalidInputException if the id is not a non-blank string, an integral number or an ObjectId
     */
    public boolean createRoot(Object rootId) {
        Object id = store.rootId(rootId);
        return calls.operation("create root", id, () -> writes.createRoot(id));
    }

    /**
     * Stages {@code changeSet} without committing it: records it on the root and writes its item versions, none of
     * them visible. {@link #apply}, a retried {@link #commit} or {@link #recover} commits it later, if its base is
     * still the root's version. Idempotent.
     *
     * @throws VersionConflictException     if the base version is stale (nothing is written)
     * @throws UnknownRootException         if there is no such root (nothing is written)
     * @throws InvalidInputException        if the change set is invalid (nothing is written)
     * @throws IdempotencyConflictException if its id was used for another change set of the root (nothing is written)
     */
    @Override
    public OperationId submit(ChangeSet changeSet) {
        VersionWrites.Prepared p = writes.prepare(changeSet);
        return calls.operation("submit", changeSet.id().value(), () -> {
            writes.submit(p);
            return changeSet.id();
        });
    }

    /**
     * Commits {@code changeSet}: stage on the root, write the item versions, compare-and-set the root (three round
     * trips). Committing a change set already committed (same id, same content) returns its result. Staged first
     * because its id is the caller's, who may send it again: the stage finds it staged or committed before anything
     * is written, and {@link #recover} can finish it. {@link #update}, whose change set is its own, commits without
     * staging.
     *
     * @throws VersionConflictException     if another change set was committed on the same base first (before any
     *                                      write when it is already visible; otherwise this one's documents are
     *                                      deleted again)
     * @throws ChangeSetAbandonedException  if recovery abandoned it while this thread was paused
     * @throws UnknownRootException         if there is no such root (nothing is written)
     * @throws InvalidInputException        if the change set is invalid: a base ahead of the root, bad ids, keys or
     *                                      sizes, no changes (nothing is written)
     * @throws IdempotencyConflictException if its id was used for another change set of the root (nothing is written)
     */
    public CommitResult commit(ChangeSet changeSet) {
        VersionWrites.Prepared p = writes.prepare(changeSet);
        return calls.operation("commit", changeSet.id().value(),
                () -> new CommitResult(p.rootId(), changeSet.id(), writes.commit(p).version()));
    }

    /**
     * {@link #commit} as the common protocol: committed; aborted (state {@code ABANDONED}) when it lost to another
     * commit after staging or was abandoned by recovery.
     *
     * @throws VersionConflictException if the base version is already stale (nothing is written)
     */
    @Override
    public OperationResult apply(ChangeSet changeSet) {
        VersionWrites.Prepared p = writes.prepare(changeSet);
        return calls.operation("apply", changeSet.id().value(), () -> writes.apply(p));
    }

    /**
     * The retry helper: reads the tree, lets {@code edit} add puts and deletes to a change set made from it, commits,
     * and on a conflict does it all again from a fresh read, up to {@link VersionedStoreConfig#conflictAttempts()}
     * times: three round trips (the read, the item versions, the compare-and-set) when nothing conflicts. {@code edit}
     * must depend only on the tree it is given.
     *
     * @throws VersionConflictException if every attempt lost a conflict
     * @throws InvalidInputException    if {@code edit} adds nothing, or something invalid
     */
    public CommitResult update(Object rootId, BiConsumer<VersionedTree, ChangeSet.Builder> edit) {
        Objects.requireNonNull(edit, "edit");
        VersionConflictException last = null;
        for (int attempt = 1; attempt <= config.conflictAttempts(); attempt++) {
            VersionReads.Current current = calls.idempotent("read", () -> reads.current(rootId));
            VersionedTree tree = current.tree();
            ChangeSet.Builder builder = ChangeSet.on(tree.rootId(), tree.version());
            edit.accept(tree, builder);
            // a fresh id, made here: nobody can have staged or committed it, so no look-up of it is needed
            ChangeSet changeSet = builder.build();
            VersionWrites.Prepared p = writes.prepare(changeSet);
            try {
                return calls.operation("commit", changeSet.id().value(),
                        () -> new CommitResult(p.rootId(), changeSet.id(), writes.commitDirect(p, current).version()));
            } catch (VersionConflictException | ChangeSetAbandonedException e) {
                last = e instanceof VersionConflictException c ? c
                        : new VersionConflictException(name(), e.documentId().orElse(null), tree.rootId(),
                                tree.version(), tree.version());
                pause(attempt);
            }
        }
        throw last;
    }

    private void pause(int attempt) {
        try {
            Duration d = config.retryPolicy().delay(attempt);
            Thread.sleep(d.toMillis(), (int) (d.toNanos() % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OperationInterruptedException(name(), null, "interrupted while retrying a conflicting update",
                    e);
        }
    }

    /** The whole tree at the root's committed version: one round trip. */
    public VersionedTree read(Object rootId) {
        return calls.idempotent("read", () -> reads.read(rootId));
    }

    /**
     * The whole tree as it was committed at {@code version}: one round trip for the root's version and the one before
     * it while the root carries them ({@link VersionedStoreConfig#inlineTreeBytes()}), two for an older one (the root,
     * then the aggregation over item versions).
     *
     * @throws VersionPrunedException if the retention policy removed that version
     * @throws InvalidInputException  if {@code version} is negative or ahead of the root
     */
    public VersionedTree readAsOf(Object rootId, long version) {
        return calls.idempotent("read as of", () -> reads.readAsOf(rootId, version));
    }

    /**
     * The whole tree as it was at {@code at}: the newest version committed at or before that time (the server's time
     * of the commit, to the millisecond), or version 0, the empty root, when none was. Read in one round trip.
     *
     * @throws VersionPrunedException if the retention policy removed the version of that time
     * @throws InvalidInputException  if {@code at} is null
     */
    public VersionedTree readAsOf(Object rootId, java.time.Instant at) {
        return calls.idempotent("read as of", () -> reads.readAsOf(rootId, at));
    }

    /** Item {@code itemId} at the root's committed version, if it exists there (one round trip). */
    public Optional<Document> get(Object rootId, Object itemId) {
        return calls.idempotent("get", () -> reads.get(rootId, itemId));
    }

    /**
     * Item {@code itemId} at the root's committed version decoded as {@code type} with the database's codec registry
     * (the record or POJO it was put as), if it exists there (one round trip).
     *
     * @throws InvalidInputException if the stored item cannot be read as {@code type}
     */
    public <T> Optional<T> get(Object rootId, Object itemId, Class<T> type) {
        return get(rootId, itemId).map(item -> decode(item, type));
    }

    /**
     * An item of a tree this store read ({@link VersionedTree#items()}, {@link ItemVersion#value()}) decoded as
     * {@code type} with the database's codec registry.
     *
     * @throws InvalidInputException if it cannot be read as {@code type}
     */
    public <T> T decode(Document item, Class<T> type) {
        return Values.decode(name(), "item", java.util.Objects.requireNonNull(item, "item"), type, codecRegistry);
    }

    /** Every committed version of item {@code itemId} still kept, oldest first, deletes included. */
    public List<ItemVersion> history(Object rootId, Object itemId) {
        return calls.idempotent("history", () -> reads.history(rootId, itemId));
    }

    /** Every committed version of the root still kept (version 0, the empty root, has no entry), oldest first. */
    public List<VersionInfo> versions(Object rootId) {
        return calls.idempotent("versions", () -> reads.versions(rootId));
    }

    /**
     * What changed from version {@code from} to version {@code to}.
     *
     * @throws InvalidInputException  if {@code from > to}, or either is ahead of the root
     * @throws VersionPrunedException if either was pruned
     */
    public VersionDiff diff(Object rootId, long from, long to) {
        if (from > to) {
            throw new InvalidInputException(name(), "from", "from (" + from + ") must be <= to (" + to + ")");
        }
        Map<Object, Document> a = readAsOf(rootId, from).items();
        Map<Object, Document> b = readAsOf(rootId, to).items();
        Map<Object, Document> added = new HashMap<>();
        Map<Object, Document> removed = new HashMap<>();
        Map<Object, Document> changed = new HashMap<>();
        b.forEach((id, value) -> {
            Document before = a.get(id);
            if (before == null) {
                added.put(id, value);
            } else if (!before.equals(value)) {
                changed.put(id, value);
            }
        });
        a.forEach((id, value) -> {
            if (!b.containsKey(id)) {
                removed.put(id, value);
            }
        });
        return new VersionDiff(from, to, added, removed, changed);
    }

    /** Marks the documents of every committed, unsettled version; returns the versions settled. */
    public long settle() {
        return calls.idempotent("settle", settlement::settle);
    }

    /**
     * Deletes the documents of abandoned change sets, and of direct commits that can no longer commit (their writer
     * quiet for {@link VersionedStoreConfig#staleAfter()} with the root still at their base: the root's fence moves
     * on first); returns how many.
     */
    public long cleanup() {
        return calls.idempotent("clean up", () -> maintenance.cleanup());
    }

    /** Applies {@link VersionedStoreConfig#retention()} to every root; returns the documents deleted. */
    public long prune() {
        return calls.idempotent("prune", maintenance::prune);
    }

    /**
     * Recovery and settling every 10 s (abandoned change sets, unsettled versions), and clean-up and pruning by the
     * retention every hour.
     */
    @Override
    public List<MaintenanceStep> maintenance() {
        return List.of(MaintenanceStep.of(name() + " recover", Duration.ofSeconds(10), this::recover),
                MaintenanceStep.of(name() + " settle", Duration.ofSeconds(10), this::settle),
                MaintenanceStep.of(name() + " clean up", Duration.ofHours(1), this::cleanup),
                MaintenanceStep.of(name() + " prune", Duration.ofHours(1), this::prune));
    }

    @Override
    public Guarantees guarantees() {
        return new Guarantees(
                "a change set becomes visible all at once, by one compare-and-set on its root",
                "exactly one committed version of the whole tree: never part of a change set, never an abandoned"
                        + " one; readers never wait",
                "per root, versions 1, 2, 3… one change set each; a writer whose base moved gets a conflict",
                "a stale staged change set is committed if its base is current and its documents complete, else"
                        + " abandoned and its documents deleted");
    }

    /** Builds a {@link VersionedStore}. Setters check their argument. */
    public static final class Builder extends VersionedStoreConfig.Settings<Builder> {

        private VersionedStoreListener listener = new VersionedStoreListener() { };

        private Builder(MongoDatabase database) {
            super(database);
        }

        /** Hooks called as change sets are staged, committed and abandoned. */
        public Builder listener(VersionedStoreListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /**
         * Builds the instance. Sends nothing to the server.
         *
         * @throws dev.consistencykit.core.UnsafeConfigurationException if the write concern is {@code w:0}
         */
        public VersionedStore build() {
            MongoDatabase db = acknowledgedDatabase();
            VersionedStoreConfig built = builtConfig();
            ServerClock time = serverClockFor(db, built);
            return new VersionedStore(built, calls(built), VersionParts.of(built, db, time, listener),
                    db.getCodecRegistry());
        }
    }
}
