package dev.consistencykit.logreconciliation.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The highest seqId this process has seen for each account: where its next append starts numbering. A hint only (a
 * collision corrects it); forgotten for an account whose numbers another writer took.
 */
final class LedgerHeads {

    private final Map<String, Long> heads = new ConcurrentHashMap<>();

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
}
