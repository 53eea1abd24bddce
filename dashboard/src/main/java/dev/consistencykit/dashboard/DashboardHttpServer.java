package dev.consistencykit.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * Serves a {@link Dashboard} on the JDK's own HTTP server: what the CLI's {@code dashboard} command runs. Bound to the
 * address given (the CLI binds loopback unless told otherwise); on a loopback address it answers only requests that
 * name a loopback host, so a web page elsewhere cannot reach it through a name that resolves to this machine (DNS
 * rebinding).
 */
public final class DashboardHttpServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DashboardHttpServer.class);
    private static final int THREADS = 4;
    private static final long MAX_QUERY = 4_096;
    private static final int MAX_BODY = 65_536;

    private final HttpServer server;
    private final ExecutorService executor;
    private final Dashboard dashboard;
    private final Set<String> allowedHosts;

    private DashboardHttpServer(HttpServer server, ExecutorService executor, Dashboard dashboard) {
        this.server = server;
        this.executor = executor;
        this.dashboard = dashboard;
        int port = server.getAddress().getPort();
        this.allowedHosts = server.getAddress().getAddress().isLoopbackAddress()
                ? Set.of("127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port) : Set.of();
    }

    /**
     * Starts serving {@code dashboard} on {@code address} (port 0: any free port).
     *
     * @throws UncheckedIOException if the address cannot be bound
     */
    public static DashboardHttpServer start(Dashboard dashboard, InetSocketAddress address) {
        HttpServer server;
        try {
            server = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
            Thread t = new Thread(r, "consistency-kit-dashboard-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        DashboardHttpServer served = new DashboardHttpServer(server, executor, dashboard);
        server.createContext("/", served::exchange);
        server.setExecutor(executor);
        server.start();
        return served;
    }

    /** The address it listens on. */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** The page's address, {@code http://127.0.0.1:8090/}. */
    public URI uri() {
        InetSocketAddress a = server.getAddress();
        String host = a.getAddress().isAnyLocalAddress() ? "127.0.0.1" : a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/");
    }

    /** Stops serving: requests in progress get a second to end. */
    @Override
    public void close() {
        server.stop(1);
        executor.shutdownNow();
    }

    private void exchange(HttpExchange exchange) {
        try (exchange) {
            String host = exchange.getRequestHeaders().getFirst("Host");
            DashboardResponse response;
            if (!allowedHosts.isEmpty() && (host == null || !allowedHosts.contains(host.toLowerCase(Locale.ROOT)))) {
                response = DashboardResponse.json(421, DashboardJson.of(new org.bson.Document("error",
                        "this dashboard answers only requests to a loopback address")));
            } else {
                drain(exchange.getRequestBody());
                try {
                    response = answer(exchange);
                } catch (RuntimeException e) {
                    // a bug of ours, not the client's: a 500 the page shows, and the log to find it by
                    LOG.error("dashboard: {} {} failed", exchange.getRequestMethod(), exchange.getRequestURI()
                            .getRawPath(), e);
                    response = DashboardResponse.json(500, DashboardJson.of(new org.bson.Document("error",
                            "the dashboard failed: " + e.getClass().getSimpleName() + " (logged)")));
                }
            }
            Dashboard.HEADERS.forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
            exchange.getResponseHeaders().set("Content-Type", response.contentType());
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(response.status(), head ? -1 : response.length());
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    response.writeTo(out);
                }
            }
        } catch (IOException e) {
            // the client went away: its answer is lost, nothing else
            LOG.debug("dashboard: a client dropped its connection: {}", e.getMessage());
        }
    }

    private DashboardResponse answer(HttpExchange exchange) {
        URI uri = exchange.getRequestURI();
        Map<String, String> query;
        try {
            query = query(uri.getRawQuery());
        } catch (IllegalArgumentException e) {
            return DashboardResponse.json(400, DashboardJson.of(new org.bson.Document("error", "a malformed query: "
                    + e.getMessage())));
        }
        return dashboard.handle(new DashboardRequest(exchange.getRequestMethod(), uri.getRawPath(), query,
                exchange.getRequestHeaders().getFirst(Dashboard.TOKEN_HEADER)));
    }

    /**
     * Reads and drops a request body, at most {@value #MAX_BODY} bytes: no API call takes one (a client that sends more
     * sees its connection closed).
     */
    private static void drain(InputStream body) throws IOException {
        body.readNBytes(MAX_BODY);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        if (raw.length() > MAX_QUERY) {
            throw new IllegalArgumentException("the query is too long");
        }
        for (String pair : raw.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.putIfAbsent(key, value);
        }
        return out;
    }
}
