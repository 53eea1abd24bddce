/** Spring Boot auto-configuration of consistency-kit. */
package dev.consistencykit.spring;
