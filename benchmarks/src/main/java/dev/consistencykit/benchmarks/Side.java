package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One side of a comparison: a library doing a workload, in a database of its own (so that the proxy's figures for
 * that database are the side's own). Created for one size of the workload, prepared once, then run in phases.
 */
interface Side extends AutoCloseable {

    /** The library and what it does, as the table shows it. */
    String name();

    /** The database this side works in, and only this side. */
    String database();

    /**
     * Puts {@code documents} documents in the collections the workload touches (accounts, waiting jobs, versioned
     * trees), dropping what an earlier run left.
     *
     * @throws SideUnavailableException when the side cannot run on this server, saying exactly what failed
     */
    void prepare(int documents);

    /**
     * Where this side's collections live when the benchmark runs sharded ({@code --shard}): each collection to shard,
     * to the field of its hashed shard key — ours as docs/operations.md recommends, a peer's on the field its own
     * queries name. The collections not named stay unsharded; by default, all.
     */
    default Map<String, String> shardKeys() {
        return Map.of();
    }

    /** Runs the workload on {@code callers} concurrent callers for {@code duration}. */
    Phase run(int callers, Duration duration);

    /** What is wrong with the data after the runs (money created or lost, a job left behind): nothing, if all holds. */
    List<String> check();

    /**
     * What the runs left on the user's documents that the table's counts of documents per collection do not show
     * (the longest list of markers on an account), read after {@link #check}; nothing by default.
     */
    default List<String> notes() {
        return List.of();
    }

    @Override
    void close();
}
