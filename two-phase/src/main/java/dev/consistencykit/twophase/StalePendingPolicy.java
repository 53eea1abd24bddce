package dev.consistencykit.twophase;

/** What recovery does with a transaction found stale in {@code pending} (the decision was never made). */
public enum StalePendingPolicy {
    /** Cancel it and roll back whatever was prepared. The default: the owner went quiet before deciding. */
    ROLL_BACK,
    /** Finish preparing it and commit, if every precondition still holds; otherwise cancel it. */
    ROLL_FORWARD
}
