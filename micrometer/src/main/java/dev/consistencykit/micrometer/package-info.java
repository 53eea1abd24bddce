/**
 * Micrometer meters for consistency-kit: {@link dev.consistencykit.micrometer.ConsistencyKitMeters} binds each
 * pattern's counters, its listener events and a maintenance runner's health to a {@code MeterRegistry}, every meter
 * tagged with the instance name.
 */
package dev.consistencykit.micrometer;
