/**
 * The embedded MongoDB wire-protocol server every test and the CLI's no-setup mode run on: mongo-java-server's
 * in-memory backend with single-document read atomicity restored and equality lookups served from indexes. Its own
 * module, depending on nothing of the project, so that core's tests can run on it too.
 */
package dev.consistencykit.embedded;
