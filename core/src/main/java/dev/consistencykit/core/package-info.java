/**
 * The {@link dev.consistencykit.core.ConsistencyStrategy} SPI every pattern implements, and the shared
 * building blocks the patterns are made of: guarded single-document updates with typed outcomes,
 * leases with fencing tokens, transient-error retry, server time, input validation and the exception
 * hierarchy rooted at {@link dev.consistencykit.core.ConsistencyException}.
 */
package dev.consistencykit.core;
