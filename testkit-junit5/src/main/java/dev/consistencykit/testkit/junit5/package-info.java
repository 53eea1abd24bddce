/**
 * The JUnit 5 side of the testkit: {@link dev.consistencykit.testkit.junit5.MongoTestExtension} gives each test a
 * fresh database on the configured server, and {@link dev.consistencykit.testkit.junit5.StrategyCompatibilityKit} is
 * the contract every {@link dev.consistencykit.core.ConsistencyStrategy} passes. Everything else the testkit offers
 * (embedded server, fault injection, explorers, contract checks) lives in {@code consistency-kit-testkit}, which has
 * no test framework at compile scope.
 */
package dev.consistencykit.testkit.junit5;
