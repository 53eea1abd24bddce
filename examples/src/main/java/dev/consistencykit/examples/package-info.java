/** Runnable examples of each pattern and the cross-pattern comparison. */
package dev.consistencykit.examples;
