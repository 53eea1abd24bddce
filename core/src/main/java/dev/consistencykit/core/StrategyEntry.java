package dev.consistencykit.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.Counters;
import dev.consistencykit.core.spi.DriverFloor;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.PatternInspection;
import dev.consistencykit.core.spi.PatternRecovery;
import dev.consistencykit.core.spi.PatternSetup;

/**
 * The shape every pattern's entry type shares, written once: its configuration and name, and the lifecycle calls that
 * go through its call boundary ({@link Calls}: deadline, typed errors, interruption) to the part that does each: the
 * store ({@link PatternSetup}), the recovery ({@link PatternRecovery}) and the operator's reads
 * ({@link PatternInspection}). A pattern's entry type adds its own operations, calling its parts directly; its builder
 * creates it from the configuration, the boundary and the parts.
 *
 * @param <C> the change the pattern applies
 * @param <K> the pattern's configuration
 * @param <M> the pattern's counters
 */
public abstract class StrategyEntry<C, K extends StrategyConfig, M extends Record> implements ConsistencyStrategy<C> {

    /** The settings, a copy nothing changes. */
    protected final K config;
    /** The boundary of every public call. */
    protected final Calls calls;
    private final PatternSetup setup;
    private final PatternRecovery recovery;
    private final PatternInspection<M> inspection;

    /**
     * @param config the built configuration
     * @param setup      the pattern's store: indexes, their check, the release of held records
     * @param recovery   the pattern's recovery
     * @param inspection the pattern's operator reads and counters
     * @param calls  the call boundary made from {@code config}
     */
    protected StrategyEntry(K config, Calls calls, PatternSetup setup, PatternRecovery recovery,
                            PatternInspection<M> inspection) {
        this.config = Objects.requireNonNull(config, "config");
        this.setup = Objects.requireNonNull(setup, "setup");
        this.recovery = Objects.requireNonNull(recovery, "recovery");
        this.inspection = Objects.requireNonNull(inspection, "inspection");
        this.calls = Objects.requireNonNull(calls, "calls");
    }

    /**
     * Records this instance wrote and has not released yet, older than {@code olderThan} (server time), at most
     * {@code limit}, from any instance: what keeps them from prune or archive ({@link KeptRecord}).
     *
     * @throws IllegalArgumentException if {@code olderThan} is negative or {@code limit} is not positive
     */
    @Override
    public final List<KeptRecord> kept(Duration olderThan, int limit) {
        Checks.notNegative("olderThan", olderThan);
        Checks.atLeast("limit", limit, 1);
        return calls.idempotent("list kept records", () -> inspection.kept(olderThan, limit));
    }

    /**
     * Releases every record this instance wrote and still holds, so that prune or archive may remove them once they are
     * past retention: one write. Call it when the instance is no longer used (a Spring context does at shutdown). The
     * instance stays usable; a failure is logged, and the records stay held until a later flush (recover, prune) or an
     * operator releases them.
     */
    @Override
    public final void close() {
        try {
            calls.idempotent("release records", (Runnable) setup::close);
        } catch (ConsistencyException e) {
            LOG.warn("[{}] close: could not release this instance's records, they stay held: {}", name(),
                    e.getMessage());
        }
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StrategyEntry.class);

    /** The settings. */
    public final K config() {
        return config;
    }

    @Override
    public final String name() {
        return config.name();
    }

    @Override
    public final String pattern() {
        return calls.pattern();
    }

    @Override
    public final List<String> setupProblems() {
        List<String> problems = new ArrayList<>();
        try {
            DriverFloor.require(name());
        } catch (UnsafeConfigurationException e) {
            problems.add(e.getMessage());
        }
        problems.addAll(calls.idempotent("check setup", setup::setupProblems));
        return problems;
    }

    /** Creates every index the pattern needs and records the instance for operators' tools. Idempotent. */
    @Override
    public final void ensureIndexes() {
        calls.idempotent("ensure indexes", setup::ensureIndexes);
    }

    /**
     * Finishes or undoes every operation left unfinished longer than {@code staleAfter} (zero: every unfinished one),
     * by fenced compare-and-sets: safe from many processes at once.
     *
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     */
    @Override
    public final RecoveryReport recover(Duration staleAfter) {
        Checks.notNegative("staleAfter", staleAfter);
        return calls.idempotent("recover", () -> recovery.recover(staleAfter));
    }

    /**
     * Finishes or undoes the operation {@code id} if it is unfinished and has made no progress for {@code staleAfter}
     * (zero: whatever its age), by the same fenced compare-and-sets as {@link #recover(Duration)}.
     *
     * @throws IllegalArgumentException if {@code staleAfter} is negative
     * @throws InvalidInputException    if {@code id} is not a valid id
     */
    @Override
    public final RecoveryReport recoverOne(Object id, Duration staleAfter) {
        Checks.notNegative("staleAfter", staleAfter);
        Object checked = Ids.documentId(name(), "id", id);
        return calls.idempotent("recover one", () -> recovery.recoverOne(checked, staleAfter));
    }

    /**
     * The operation {@code id}: its record and the documents it touches, as a reader sees them now. Read-only.
     *
     * @throws InvalidInputException if {@code id} is not a valid id
     */
    @Override
    public final java.util.Optional<OperationView> describe(Object id) {
        Object checked = Ids.documentId(name(), "id", id);
        return calls.idempotent("describe", () -> inspection.describe(checked));
    }

    /** Operations finished within the last {@code window}, by an index, at most {@code cap}; empty if not kept. */
    @Override
    public final java.util.OptionalLong finishedWithin(Duration window, int cap) {
        Checks.notNegative("window", window);
        Checks.atLeast("cap", cap, 1);
        return calls.idempotent("count finished", () -> inspection.finishedSince(window, cap));
    }

    /** {@link #recover(Duration)} with the configuration's {@link StrategyConfig#staleAfter()}. */
    @Override
    public final RecoveryReport recover() {
        return recover(config.staleAfter());
    }

    /**
     * Operations left unfinished longer than {@code staleAfter} (zero: every unfinished one), oldest first, at most
     * {@code limit}; the pattern's documentation says what it counts as unfinished.
     */
    @Override
    public final List<InterruptedOperation> interrupted(Duration staleAfter, int limit) {
        InterruptedOperation.checkQuery(staleAfter, limit);
        return calls.idempotent("list interrupted", () -> inspection.interrupted(staleAfter, limit));
    }

    /** Operations by state, and the age of the oldest unfinished one. */
    @Override
    public final StrategyStatus status() {
        return calls.idempotent("status", inspection::status);
    }

    /** This instance's counters. */
    public final M metrics() {
        return inspection.metrics();
    }

    /** {@link #metrics()} by name, for a metrics registry. */
    @Override
    public final Map<String, Long> counters() {
        return Counters.of(metrics());
    }
}
