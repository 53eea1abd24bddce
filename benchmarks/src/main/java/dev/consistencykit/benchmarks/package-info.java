/**
 * The peer benchmark behind {@code scripts/bench-peers}: each workload through a consistency-kit pattern and through
 * the library one would otherwise use (mgo/txn, MongoDB's transactions, JobRunr, JaVers), on one server behind a
 * {@link dev.consistencykit.benchmarks.CountingProxy}, interleaved. A command-line program, not a library: its table
 * goes to standard output and its progress to standard error. Not published.
 */
package dev.consistencykit.benchmarks;
