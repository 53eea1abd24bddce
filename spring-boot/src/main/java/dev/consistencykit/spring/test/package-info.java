/** {@code @ConsistencyKitTest}: a test slice for an application's own handlers and services on consistency-kit. */
package dev.consistencykit.spring.test;
