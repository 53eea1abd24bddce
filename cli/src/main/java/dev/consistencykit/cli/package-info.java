/** The {@code consistency-kit} command-line interface. */
package dev.consistencykit.cli;
