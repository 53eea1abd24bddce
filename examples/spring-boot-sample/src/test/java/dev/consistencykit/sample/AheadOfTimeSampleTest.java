package dev.consistencykit.sample;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;

/**
 * The sample application as Spring's ahead-of-time processing leaves it: {@code SpringApplicationAotProcessor} (what
 * {@code spring-boot-maven-plugin}'s {@code process-aot} runs) generates the context's code and hints from the sample
 * and its properties, the code is compiled, and the application is started from it in a JVM of its own with
 * {@code -Dspring.aot.enabled=true} (no bean definition read from a class or a condition at start: every one is the
 * generated code's). It then serves a transfer over HTTP and its shipping workers run an order's job: the starter's
 * instances, handlers and workers came from generated code. On the JVM; no GraalVM is installed on this project's
 * machines, so no native image is built.
 */
class AheadOfTimeSampleTest {

    private static final Duration START = Duration.ofMinutes(3);
    private static final Pattern PORT = Pattern.compile("Tomcat started on port (?:\\(s\\): )?(\\d+)");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void shouldServeTransfersAndRunJobsFromTheGeneratedContext(@TempDir Path dir) throws Exception {
        MongoTarget target = MongoTarget.fromEnvironment();
        String database = MongoTarget.freshDatabaseName("aot");
        String uri = target.connectionString().getConnectionString();
        List<String> args = List.of("--spring.mongodb.uri=" + uri, "--server.port=0",
                "--consistency-kit.database=" + database, "--consistency-kit.job-queue.shipping.workers=2");
        Path sources = dir.resolve("sources");
        Path resources = dir.resolve("resources");
        Path classes = dir.resolve("classes");
        String classPath = System.getProperty("java.class.path");

        List<String> aot = new ArrayList<>(List.of(java(), "-cp", classPath,
                "org.springframework.boot.SpringApplicationAotProcessor", SampleApplication.class.getName(),
                sources.toString(), resources.toString(), classes.toString(), "dev.consistencykit", "sample"));
        aot.addAll(args);
        Run processing = Run.start(aot);
        assertThat(processing.process.waitFor(START.toSeconds(), TimeUnit.SECONDS)).as("AOT processing ended")
                .isTrue();
        assertThat(processing.process.exitValue()).as(processing.output()).isZero();
        compile(sources, classes, classPath);

        List<String> run = new ArrayList<>(List.of(java(), "-Dspring.aot.enabled=true", "-cp",
                classes + File.pathSeparator + resources + File.pathSeparator + classPath,
                SampleApplication.class.getName()));
        run.addAll(args);
        Run app = Run.start(run);
        MongoDatabase db = target.client().getDatabase(database);
        try {
            String base = "http://127.0.0.1:" + app.awaitPort();
            assertThat(app.output()).contains("Starting AOT-processed");

            assertThat(post(base + "/accounts", new Document("id", "alice").append("balance", 100)).statusCode())
                    .isEqualTo(201);
            assertThat(post(base + "/accounts", new Document("id", "bob").append("balance", 0)).statusCode())
                    .isEqualTo(201);
            HttpResponse<String> transfer = post(base + "/transfers", new Document("id", "t1").append("from", "alice")
                    .append("to", "bob").append("amount", 30));
            assertThat(transfer.statusCode()).as(transfer.body()).isEqualTo(200);
            assertThat(Document.parse(transfer.body()).getString("outcome")).isEqualTo("COMMITTED");
            assertThat(db.getCollection("accounts").find(eq("_id", "bob")).first().get("balance"))
                    .isEqualTo(30L);

            HttpResponse<String> order = post(base + "/orders", new Document("id", "o1").append("item", "book")
                    .append("quantity", 1));
            assertThat(order.statusCode()).as(order.body()).isEqualTo(201);
            // a bound on another process's work, not a timing: generous, as START is
            long deadline = System.nanoTime() + START.toNanos();
            Document job = null;
            while (System.nanoTime() < deadline) {
                job = db.getCollection("shipping").find(eq("_id", "ship-o1")).first();
                if (job != null && "done".equals(job.getString("state"))) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(job).as("the order's shipping job, run by the workers: " + app.output()).isNotNull();
            assertThat(job.getString("state")).isEqualTo("done");
        } finally {
            app.process.destroy();
            if (!app.process.waitFor(30, TimeUnit.SECONDS)) {
                app.process.destroyForcibly();
            }
            db.drop();
        }
    }

    private HttpResponse<String> post(String uri, Document body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toJson()))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Compiles the generated sources into {@code classes}, beside the classes the processing generated there. */
    private static void compile(Path sources, Path classes, String classPath) throws IOException {
        List<String> files;
        try (Stream<Path> walk = Files.walk(sources)) {
            files = walk.filter(p -> p.toString().endsWith(".java")).map(Path::toString).toList();
        }
        assertThat(files).as("generated sources").isNotEmpty();
        Files.createDirectories(classes);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> options = new ArrayList<>(List.of("-proc:none", "-nowarn", "-d", classes.toString(),
                "-classpath", classes + File.pathSeparator + classPath));
        options.addAll(files);
        java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
        int status = javac.run(null, errors, errors, options.toArray(new String[0]));
        assertThat(status).as(errors.toString(StandardCharsets.UTF_8)).isZero();
    }

    /** A child JVM whose output is read as it comes. */
    private record Run(Process process, List<String> lines, CompletableFuture<Void> reader) {

        static Run start(List<String> command) throws IOException {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            List<String> lines = new CopyOnWriteArrayList<>();
            CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("(output lost: " + e + ")");
                }
            });
            return new Run(process, lines, reader);
        }

        String output() {
            return String.join("\n", lines);
        }

        int awaitPort() throws InterruptedException {
            long deadline = System.nanoTime() + START.toNanos();
            while (System.nanoTime() < deadline) {
                for (String line : lines) {
                    Matcher m = PORT.matcher(line);
                    if (m.find()) {
                        return Integer.parseInt(m.group(1));
                    }
                }
                if (!process.isAlive()) {
                    throw new AssertionError("the application ended before it served: " + output());
                }
                Thread.sleep(100);
            }
            throw new AssertionError("the application did not serve within " + START + ": " + output());
        }
    }
}
