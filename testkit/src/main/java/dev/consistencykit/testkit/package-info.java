/**
 * Test support for consistency-kit and its users: the embedded server and the switch to a real one, the JUnit 5
 * extension, the fault-injecting database, the crash-point explorer, the seeded chaos runner, the round-trip
 * counter, the strategy compatibility kit and the server-contract checks.
 */
package dev.consistencykit.testkit;
