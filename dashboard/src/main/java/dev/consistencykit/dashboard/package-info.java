/**
 * The operator's dashboard: {@link dev.consistencykit.dashboard.Dashboard} (the page and its JSON API over every
 * pattern instance of a database), {@link dev.consistencykit.dashboard.DashboardHttpServer} (served on the JDK's HTTP
 * server, for the CLI) and the instances it shows ({@link dev.consistencykit.dashboard.DashboardInstance}).
 */
package dev.consistencykit.dashboard;
