package dev.consistencykit.versioning.internal;

import java.util.concurrent.atomic.LongAdder;

import dev.consistencykit.versioning.VersionedStoreMetrics;

/** The counters of one versioned store, written by the parts that count and read as {@link VersionedStoreMetrics}. */
final class VersionCounters {

    final LongAdder staged = new LongAdder();
    final LongAdder committed = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder abandoned = new LongAdder();
    final LongAdder treeReads = new LongAdder();
    final LongAdder settledVersions = new LongAdder();
    final LongAdder cleanedDocuments = new LongAdder();
    final LongAdder prunedDocuments = new LongAdder();

    VersionedStoreMetrics read() {
        return new VersionedStoreMetrics(staged.sum(), committed.sum(), conflicts.sum(), abandoned.sum(),
                treeReads.sum(), settledVersions.sum(), cleanedDocuments.sum(), prunedDocuments.sum());
    }
}
