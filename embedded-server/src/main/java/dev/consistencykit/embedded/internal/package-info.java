/**
 * Private implementation of the embedded server: the read-atomic backend, database and collection, and the indexes
 * that serve equality lookups. Nothing outside this module imports this package.
 */
package dev.consistencykit.embedded.internal;
