/**
 * Server-contract checks: each MongoDB behaviour the patterns rely on, as a named check that runs against any
 * server and says PASS or FAIL with what it saw.
 */
package dev.consistencykit.testkit.contract;
