/**
 * Private implementation of the testkit: the proxies behind fault injection. Nothing outside the testkit imports
 * this package.
 */
package dev.consistencykit.testkit.internal;
