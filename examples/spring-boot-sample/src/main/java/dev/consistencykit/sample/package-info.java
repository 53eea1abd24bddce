/**
 * A Spring Boot service on the consistency-kit starter, as an application writes one: transfers between accounts
 * (two-phase commit) and orders placed with their shipping job in one write (the job queue's outbox), over HTTP, every
 * instance configured in {@code application.properties}. Not published; {@code scripts/sample-app} starts it.
 */
package dev.consistencykit.sample;
