/**
 * Pattern 1, the sync flag: a master document's copied fields are kept in step with their denormalized copies in
 * other collections, and repaired after any crash by a sweeper that finds flagged masters by index.
 *
 * <p>Design, in short: a master update is one atomic write that applies the caller's update, increments the master's
 * {@code syncVersion}, sets the {@code syncing} flag (operation id + server time) and remembers the operation id for
 * idempotency. Propagation then writes the master's current values with that version to every copy whose version is
 * lower (one {@code updateMany} per target), so copies only ever move forward: a delayed or paused writer holding an
 * older value can never overwrite a newer one, even after the flag is gone. The flag is cleared only if it is still
 * the one this update set. A sweeper (or a reader, through read repair) takes over flags older than a threshold by
 * refreshing the flag's time with one compare-and-set, propagates the master's current version, and clears the flag.
 */
package dev.consistencykit.syncflag;
