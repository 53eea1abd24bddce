package dev.consistencykit.logreconciliation.internal;

import java.util.concurrent.ConcurrentMap;

import com.google.common.cache.CacheBuilder;

/**
 * The highest seqId this process has seen for each account: where its next append starts numbering. A hint only (a
 * collision corrects it); forgotten for an account whose numbers another writer took. At most
 * {@value #MAX_ACCOUNTS} accounts are kept, the least recently used leaving first, so that a process appending to
 * ever more accounts holds no more than that: an account no longer kept asks the server for its head on its next
 * append, one read.
 */
final class LedgerHeads {

    /** The accounts whose heads are kept: a few megabytes of memory at most. */
    static final int MAX_ACCOUNTS = 100_000;

    private final ConcurrentMap<String, Long> heads;

    LedgerHeads() {
        this(MAX_ACCOUNTS);
    }

    /** Keeps the heads of at most {@code maxAccounts} accounts. */
    LedgerHeads(int maxAccounts) {
        this.heads = CacheBuilder.newBuilder().maximumSize(maxAccounts).<String, Long>build().asMap();
    }

    /** The head known for {@code account}, or {@code null}. */
    Long get(String account) {
        return heads.get(account);
    }

    /** Learns that {@code account} reached at least {@code seq}. */
    void learn(String account, long seq) {
        heads.merge(account, seq, Math::max);
    }

    /** Forgets {@code account}'s head: the next append of it asks the server. */
    void forget(String account) {
        heads.remove(account);
    }

    /** How many accounts' heads are kept. */
    long size() {
        return heads.size();
    }
}
