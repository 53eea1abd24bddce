/** Implementation of the log-reconciliation module; private API, not to be used outside it. */
package dev.consistencykit.logreconciliation.internal;
