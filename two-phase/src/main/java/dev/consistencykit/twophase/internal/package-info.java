/**
 * Implementation of the two-phase commit: validation and storage of participant specs, and the transaction state
 * machine shared by {@code apply()}, workers and recovery. Private API: nothing outside this module imports it.
 */
package dev.consistencykit.twophase.internal;
