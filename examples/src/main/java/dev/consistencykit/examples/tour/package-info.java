/**
 * The tour: one example per pattern on its natural use case, each a plain class to copy, narrating what it writes and
 * what a reader sees, then crashing one step on purpose and showing recovery repair it.
 */
package dev.consistencykit.examples.tour;
