package dev.consistencykit.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;

/**
 * A team's first day: the application starts from one property on its own in-memory server and serves a transfer and
 * a job; its health stays 200 with a dead job (listed in the details) and turns 503 when the server is gone.
 */
class FirstWeekTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private static String base(ConfigurableApplicationContext app) {
        return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    private HttpResponse<String> post(String url, Document body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toJson()))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldStartOnItsInMemoryServerFromOnePropertyAndServeATransferAndAJob() throws Exception {
        // no URI at all: SampleApplication.start(null) adds consistency-kit.embedded.enabled=true and nothing else
        try (ConfigurableApplicationContext app = SampleApplication.start(null, "--server.port=0")) {
            String base = base(app);
            assertThat(post(base + "/accounts", new Document("id", "alice").append("balance", 100L)).statusCode())
                    .isEqualTo(201);
            assertThat(post(base + "/accounts", new Document("id", "bob").append("balance", 0L)).statusCode())
                    .isEqualTo(201);
            HttpResponse<String> moved = post(base + "/transfers", new Document("id", "t1").append("from", "alice")
                    .append("to", "bob").append("amount", 30L));
            assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
            assertThat(Document.parse(get(base + "/accounts/bob").body()).get("balance", Number.class).longValue())
                    .isEqualTo(30L);

            assertThat(post(base + "/orders", new Document("id", "o1").append("item", "book").append("quantity", 2))
                    .statusCode()).isEqualTo(201);
            // the starter's two shipping workers run the order's job
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            String status = null;
            while (!"shipped".equals(status) && System.nanoTime() < deadline) {
                status = Document.parse(get(base + "/orders/o1").body()).getString("status");
                Thread.sleep(20);
            }
            assertThat(status).isEqualTo("shipped");
        }
    }

    @Test
    void shouldAnswer200WithADeadJobInTheDetailsAnd503WithTheServerGone() throws Exception {
        EmbeddedMongo server = EmbeddedMongo.start();
        try (ConfigurableApplicationContext app = SampleApplication.start(server.connectionString()
                        + "/?serverSelectionTimeoutMS=1000&connectTimeoutMS=1000", "--server.port=0",
                "--consistency-kit.job-queue.shipping.workers=0",
                "--consistency-kit.job-queue.shipping.operation-timeout=3s",
                "--consistency-kit.two-phase.payments.operation-timeout=3s",
                "--consistency-kit.maintenance.enabled=false")) {
            String base = base(app);
            JobQueue shipping = app.getBean("shipping", JobQueue.class);
            assertThat(shipping.apply(JobRequest.of("no-such-type", new Document()).withId(OperationId.of("poison")))
                    .state()).isEqualTo("dead");

            HttpResponse<String> withDead = get(base + "/actuator/health");
            assertThat(withDead.statusCode()).as(withDead.body()).isEqualTo(200);
            assertThat(withDead.body()).contains("\"deadJobs\":1").contains("poison").contains("1 dead job waiting");

            server.close();
            HttpResponse<String> gone = get(base + "/actuator/health");
            assertThat(gone.statusCode()).as(gone.body()).isEqualTo(503);
            assertThat(gone.body()).contains("the server cannot be asked").doesNotContain("mongodb://");
        } finally {
            server.close();
        }
    }
    /**
     * An operator replays dead jobs through the Actuator by their ids as printed: bare hex for jobs enqueued without an
     * id of their own, in the documented body ({@code {"ids": "…"}}, several separated by commas); ids that select
     * nothing are a 404 naming them, never a 200 that moved nothing.
     */
    @Test
    void shouldReplayDeadJobsByTheirIdsAsPrintedAndSayWhenNoneMatched() throws Exception {
        try (ConfigurableApplicationContext app = SampleApplication.start(null, "--server.port=0",
                "--consistency-kit.job-queue.shipping.workers=0", "--consistency-kit.maintenance.enabled=false")) {
            String base = base(app);
            JobQueue shipping = app.getBean("shipping", JobQueue.class);
            String first = shipping.apply(JobRequest.of("no-such-type", new Document())).id().toString();
            String second = shipping.apply(JobRequest.of("no-such-type", new Document())).id().toString();
            assertThat(first).matches("[0-9a-f]{24}");

            HttpResponse<String> listed = post(base + "/actuator/consistencykit/shipping/replay",
                    new Document("ids", first));
            assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
            assertThat(Document.parse(listed.body()).get("jobs", Number.class).longValue()).isEqualTo(1L);

            HttpResponse<String> single = post(base + "/actuator/consistencykit/shipping/discard",
                    new Document("ids", second + ", " + first));   // first is no longer dead
            assertThat(single.statusCode()).as(single.body()).isEqualTo(200);
            assertThat(Document.parse(single.body()).get("jobs", Number.class).longValue()).isEqualTo(1L);

            HttpResponse<String> none = post(base + "/actuator/consistencykit/shipping/replay",
                    new Document("ids", first + ",nope"));
            assertThat(none.statusCode()).as(none.body()).isEqualTo(404);
            assertThat(none.body()).contains("nope").contains(first);
        }
    }
}
