/**
 * Pattern 3, two-phase commit: a change to several documents recorded as one transaction document, prepared on each
 * participant with a guarded mark, decided by one compare-and-set, then settled; interrupted transactions are
 * finished or undone by recovery. Entry point: {@link dev.consistencykit.twophase.TwoPhaseCommit}.
 */
package dev.consistencykit.twophase;
