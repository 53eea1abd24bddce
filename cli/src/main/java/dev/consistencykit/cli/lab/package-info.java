/**
 * Per-pattern laboratories behind {@code consistency-kit chaos} and {@code consistency-kit bench}: each pattern's
 * crash exploration, seeded chaos and benchmark against raw single-document operations.
 */
package dev.consistencykit.cli.lab;
