package dev.consistencykit.versioning;

/**
 * A read-only snapshot of one {@link VersionedStore} instance's counters since it was built.
 *
 * @param staged             change sets this instance staged
 * @param committed          change sets it committed (its own, and staged ones recovery finished)
 * @param conflicts          change sets that lost to another commit on the same base
 * @param abandoned          staged change sets it abandoned (its own after a conflict, or by recovery)
 * @param treeReads          whole-tree reads (current or as of a version)
 * @param settledVersions    versions whose documents it marked committed
 * @param cleanedDocuments   abandoned documents it deleted
 * @param prunedDocuments    documents it deleted under the retention policy
 */
public record VersionedStoreMetrics(long staged, long committed, long conflicts, long abandoned, long treeReads,
                                    long settledVersions, long cleanedDocuments, long prunedDocuments) {
}
