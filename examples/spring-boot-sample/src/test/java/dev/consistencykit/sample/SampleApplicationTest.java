package dev.consistencykit.sample;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.testkit.MongoTarget;

/**
 * The sample service started as an application starts, on the test's server (the embedded one unless
 * {@code MONGODB_URI} says otherwise), driven over HTTP by two clients at once: every balance and every job read back.
 * Its shipping jobs are run by the test, as a worker runs them (the worker threads are the starter's, tested there).
 */
class SampleApplicationTest {

    private static final List<String> ACCOUNTS = List.of("alice", "bob", "carol");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private ConfigurableApplicationContext app;
    private String base;
    private MongoDatabase db;
    private String database;

    @BeforeEach
    void start() {
        database = MongoTarget.freshDatabaseName("sample");
        // no worker threads: the test runs the shipping jobs itself, so that it waits for nothing
        app = SampleApplication.start(MongoTarget.fromEnvironment().connectionString().getConnectionString(),
                "--server.port=0", "--consistency-kit.database=" + database,
                "--consistency-kit.job-queue.shipping.workers=0");
        base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
        db = SampleApplication.database(app);
    }

    @AfterEach
    void stop() {
        app.close();
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    private HttpResponse<String> post(String path, Document body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toJson()))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldMoveMoneyAllOrNothingAndShipEveryOrderOnceOverHttp() throws Exception {
        Map<String, Long> expected = new ConcurrentHashMap<>(Map.of("alice", 10_000L, "bob", 0L, "carol", 500L));
        for (String account : ACCOUNTS) {
            assertThat(post("/accounts", new Document("id", account).append("balance", expected.get(account)))
                    .statusCode()).isEqualTo(201);
        }

        // two clients, 20 transfers each, between random accounts; the service answers each committed or 409
        ExecutorService clients = Executors.newFixedThreadPool(2);
        List<Future<?>> done = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            int client = c;
            done.add(clients.submit(() -> {
                java.util.Random random = new java.util.Random(client);
                for (int i = 0; i < 20; i++) {
                    String from = ACCOUNTS.get(random.nextInt(3));
                    String to = ACCOUNTS.get((ACCOUNTS.indexOf(from) + 1 + random.nextInt(2)) % 3);
                    long amount = 1L + random.nextInt(800);
                    HttpResponse<String> r = post("/transfers", new Document("id", "t" + client + "-" + i)
                            .append("from", from).append("to", to).append("amount", amount));
                    if (r.statusCode() == 200 && Document.parse(r.body()).getString("outcome").equals("COMMITTED")) {
                        expected.merge(from, -amount, Long::sum);
                        expected.merge(to, amount, Long::sum);
                    } else {
                        assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        clients.shutdown();
        // a client's retry of a committed transfer changes nothing
        HttpResponse<String> retry = post("/transfers", new Document("id", "t0-0").append("from", "x")
                .append("to", "y").append("amount", 1));
        assertThat(retry.statusCode()).as(retry.body()).isIn(200, 400);
        assertThat(post("/transfers", new Document("id", "huge").append("from", "carol").append("to", "bob")
                .append("amount", 1_000_000)).statusCode()).as("no funds").isEqualTo(409);

        Map<String, Long> balances = new HashMap<>();
        for (String account : ACCOUNTS) {
            balances.put(account, ((Number) Document.parse(get("/accounts/" + account).body()).get("balance"))
                    .longValue());
        }
        assertThat(balances).isEqualTo(expected);
        assertThat(balances.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(10_500L);

        // orders, each with its shipping job in one write; one placed twice by a client's retry
        int parcels = 0;
        for (int i = 0; i < 8; i++) {
            HttpResponse<String> placed = post("/orders", new Document("id", "o" + i).append("item", "book")
                    .append("quantity", i + 1));
            assertThat(placed.statusCode()).as(placed.body()).isEqualTo(201);
            assertThat(Document.parse(placed.body()).getString("job")).isEqualTo("ship-o" + i);
            parcels += i + 1;
        }
        assertThat(post("/orders", new Document("id", "o3").append("item", "book").append("quantity", 4))
                .statusCode()).as("the retry answers as the first").isEqualTo(201);
        // each order's job was relayed to the queue by the placement itself: a worker's loop runs them
        JobQueue shipping = app.getBean("shipping", JobQueue.class);
        int ran = 0;
        while (shipping.processNext().isPresent()) {
            ran++;
        }
        assertThat(ran).as("one job per order").isEqualTo(8);
        for (int i = 0; i < 8; i++) {
            Document order = Document.parse(get("/orders/o" + i).body());
            assertThat(order.getString("status")).as("o" + i).isEqualTo("shipped");
            Document stored = db.getCollection("orders").find(eq("_id", "o" + i)).first();
            assertThat(stored.keySet()).as("nothing of the outbox left").containsOnly("_id", "item", "quantity",
                    "status");
        }
        assertThat(db.getCollection("shipping").countDocuments()).as("one job per order").isEqualTo(8);
        assertThat(db.getCollection("shipping").countDocuments(eq("state", "done"))).isEqualTo(8);
        assertThat(db.getCollection("dispatch").find(eq("_id", "today")).first().getInteger("parcels"))
                .as("each order's parcels counted once").isEqualTo(parcels);

        Document health = Document.parse(get("/actuator/health").body());
        assertThat(health.getString("status")).as(health.toJson()).isEqualTo("UP");
        String endpoint = get("/actuator/consistencykit").body();
        assertThat(endpoint).contains("payments", "shipping").doesNotContain("mongodb://");
    }

    /** The operator's page, served by the application under /consistency-kit/: its instances, read-only. */
    @Test
    void shouldServeTheDashboardOfItsInstances() throws Exception {
        HttpResponse<String> bare = get("/consistency-kit");
        assertThat(bare.statusCode()).isEqualTo(302);
        assertThat(bare.headers().firstValue("Location")).get().asString().endsWith("/consistency-kit/");
        HttpResponse<String> page = get("/consistency-kit/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("dashboard.js");
        assertThat(page.headers().firstValue("X-Frame-Options")).hasValue("DENY");

        Document overview = Document.parse(get("/consistency-kit/api/overview").body());
        assertThat(overview.getString("database")).isEqualTo(database);
        assertThat(overview.getList("instances", Document.class)).extracting(i -> i.getString("key"))
                .containsExactlyInAnyOrder("two-phase/payments", "job-queue/shipping");
        assertThat(overview.toJson()).doesNotContain("mongodb://");
        HttpResponse<String> recover = http.send(HttpRequest.newBuilder(URI.create(base
                + "/consistency-kit/api/instances/two-phase/payments/recover")).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(recover.statusCode()).as("read-only").isEqualTo(403);
    }
}
