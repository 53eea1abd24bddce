/**
 * Private implementation of the testkit: the read-atomic embedded server backend and the proxies behind fault
 * injection. Nothing outside the testkit imports this package.
 */
package dev.consistencykit.testkit.internal;
