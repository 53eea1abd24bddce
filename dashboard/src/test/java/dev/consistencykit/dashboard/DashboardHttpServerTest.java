package dev.consistencykit.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The page and its API on the JDK's HTTP server, as the CLI serves them: the files, the headers that keep the page
 * from being framed or fed from elsewhere, and a loopback server that refuses a request naming another host (a page
 * elsewhere reaching it through a name that resolves here).
 */
class DashboardHttpServerTest {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return CLIENT.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldServeThePageAndTheApiWithHeadersThatKeepItToItself() throws Exception {
        Dashboard dashboard = new Dashboard("shop", List::of, new DashboardSettings());
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard, new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0))) {
            URI base = server.uri();
            HttpResponse<String> page = send(HttpRequest.newBuilder(base));
            HttpResponse<String> script = send(HttpRequest.newBuilder(base.resolve("dashboard.js")));
            HttpResponse<String> overview = send(HttpRequest.newBuilder(base.resolve("api/overview")));
            HttpResponse<String> missing = send(HttpRequest.newBuilder(base.resolve("secrets.txt")));
            HttpResponse<String> posted = send(HttpRequest.newBuilder(base).POST(HttpRequest.BodyPublishers
                    .ofString("x".repeat(10_000))));

            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
            assertThat(page.body()).contains("<script src=\"dashboard.js\"");
            assertThat(script.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
            assertThat(overview.statusCode()).isEqualTo(200);
            assertThat(Document.parse(overview.body()).getString("database")).isEqualTo("shop");
            for (HttpResponse<String> r : List.of(page, script, overview, missing, posted)) {
                assertThat(r.headers().firstValue("X-Frame-Options")).hasValue("DENY");
                assertThat(r.headers().firstValue("Content-Security-Policy")).get().asString()
                        .contains("default-src 'self'").contains("frame-ancestors 'none'");
                assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
            }
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(posted.statusCode()).isEqualTo(405);
        }
    }

    @Test
    void shouldRefuseARequestNamingAnotherHostWhenBoundToLoopback() throws Exception {
        Dashboard dashboard = new Dashboard("shop", List::of, new DashboardSettings());
        try (DashboardHttpServer server = DashboardHttpServer.start(dashboard, new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0))) {
            int port = server.address().getPort();
            // HttpClient does not let a request set Host: a raw request does
            try (java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                socket.setSoTimeout(30_000);
                socket.getOutputStream().write(("GET /api/overview HTTP/1.1\r\nHost: attacker.example:" + port
                        + "\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                String answer = new String(socket.getInputStream().readAllBytes(),
                        java.nio.charset.StandardCharsets.UTF_8);
                assertThat(answer).startsWith("HTTP/1.1 421").contains("loopback").doesNotContain("shop");
            }
            HttpResponse<String> local = send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                    + "/api/overview")));
            assertThat(local.statusCode()).isEqualTo(200);
        }
    }
}
