/**
 * The building blocks the patterns share — the call boundary, conditional updates, once-only effects, ids, the update
 * and filter grammars, server limits — for the pattern modules of this project and for a pattern of your own. Not for
 * applications: nothing here is a compatibility promise to an application's code; the user API is
 * {@code dev.consistencykit.core}.
 */
package dev.consistencykit.core.spi;
