/** Implementation of the sync-flag module; private API, not to be used outside it. */
package dev.consistencykit.syncflag.internal;
