package dev.consistencykit.core.spi;

import java.util.List;

/**
 * What a pattern's store does for the lifecycle every pattern shares: the indexes its queries and its safety need,
 * the check of them, and the release of what the instance holds. {@link dev.consistencykit.core.StrategyEntry} calls
 * it through its call boundary.
 */
public interface PatternSetup {

    /** Creates the indexes the pattern's queries and its safety need, and registers the instance. */
    void ensureIndexes();

    /**
     * What the pattern's safety rests on that the server does not give it now: each unique index it needs, read
     * from the server. Empty for a pattern whose safety rests on no index but {@code _id}'s.
     */
    default List<String> setupProblems() {
        return List.of();
    }

    /** Releases what this instance holds ({@link RecordReleases#flush}); the instance stays usable. */
    default void close() {
    }
}
