/** The versioned-store protocol's implementation; private API. */
package dev.consistencykit.versioning.internal;
