package dev.consistencykit.dashboard;

import java.util.Map;
import java.util.Objects;

/**
 * One HTTP request as the dashboard reads it, whoever serves it (the JDK's server for the CLI, a servlet in Spring
 * Boot).
 *
 * @param method the HTTP method
 * @param path   the path below the dashboard's own root, still percent-encoded, starting with {@code /}
 * @param query  the query parameters, decoded (the first value of each)
 * @param token  the value of the {@value Dashboard#TOKEN_HEADER} header, or {@code null}
 */
public record DashboardRequest(String method, String path, Map<String, String> query, String token) {

    /** Validates and copies the components. */
    public DashboardRequest {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        query = Map.copyOf(query);
    }
}
