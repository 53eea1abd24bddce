/**
 * Pattern 4, log reconciliation: a transaction is one ledger document holding every account change it makes, so it
 * is atomic by construction; each change carries a per-account sequence number that a unique multikey index keeps
 * unique; a committer advances each account's cached balance in sequence order; {@code balance()} is the cache plus
 * the later valid changes; {@code reconcile()} rebuilds an account from its log and checks the cache.
 */
package dev.consistencykit.logreconciliation;
