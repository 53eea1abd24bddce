package dev.consistencykit.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;

import org.bson.BsonDocument;
import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

/**
 * Collections sharded on the server a test runs against, where that server can shard: a MongoDB sharded cluster
 * (through its {@code mongos}, with {@code shardCollection}), or any server for which a shard command is configured —
 * the distributed engine of {@code ../shared/real-server}, whose FerretDB has no {@code shardCollection} and which
 * shards through SQL on its coordinator
 * ({@code CONSISTENCY_KIT_SHARD_COMMAND="bash shared/real-server/shard $REAL_SERVER_DIR" ./mvnw verify}). The command
 * ({@value #COMMAND_PROPERTY} or {@value #COMMAND_ENVIRONMENT}) is run by {@code bash} with three arguments appended:
 * the database, the collection and the shard key as JSON.
 *
 * <p>A test asks for one collection with {@link #shard}, after {@link #unavailable()} said why not where the server
 * cannot shard (a JUnit test skips itself with that reason). A module declares for its whole suite which collections
 * every database the testkit makes gets sharded, in {@value #PLAN_RESOURCE} on its test classpath ({@code collection
 * = shard key as JSON}): the {@linkplain #plan() plan} that {@code MongoTestExtension}, {@link ScratchDatabases}, the
 * explorers and the chaos runner {@linkplain #applyPlan apply} to each database they make where the server can shard,
 * and nowhere else. So the same suite runs unsharded on one server and sharded as the docs recommend on another.
 *
 * <pre>{@code
 * Sharding sharding = Sharding.of(client);
 * assumeTrue(sharding.unavailable().isEmpty(), sharding.unavailable().orElse(""));
 * sharding.shard(db, "orders", new Document("_id", "hashed"));
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class Sharding {

    /** The system property naming the command that shards a collection. */
    public static final String COMMAND_PROPERTY = "consistency.test.shardCommand";
    /** The environment variable naming the command that shards a collection. */
    public static final String COMMAND_ENVIRONMENT = "CONSISTENCY_KIT_SHARD_COMMAND";
    /** The classpath resource of a suite's sharding plan: {@code collection = shard key as JSON}, one per line. */
    public static final String PLAN_RESOURCE = "consistency-kit-sharding.properties";

    private static final long COMMAND_TIMEOUT_SECONDS = 120;
    private static final Map<MongoClient, Sharding> BY_CLIENT = Collections.synchronizedMap(new WeakHashMap<>());
    private static final Map<String, Document> PLAN = loadPlan();

    private final MongoClient client;
    private final String command;
    private final boolean mongos;

    private Sharding(MongoClient client, String command, boolean mongos) {
        this.client = client;
        this.command = command;
        this.mongos = mongos;
    }

    /** How {@code client}'s server shards (asked once per client: a configured command, or whether it is a mongos). */
    public static Sharding of(MongoClient client) {
        Objects.requireNonNull(client, "client");
        synchronized (BY_CLIENT) {
            return BY_CLIENT.computeIfAbsent(client, c -> {
                String command = configuredCommand().orElse(null);
                return new Sharding(c, command, command == null && isMongos(c));
            });
        }
    }

    /** The shard command configured by system property or environment, if any. */
    public static Optional<String> configuredCommand() {
        String command = System.getProperty(COMMAND_PROPERTY);
        if (command == null || command.isBlank()) {
            command = System.getenv(COMMAND_ENVIRONMENT);
        }
        return command == null || command.isBlank() ? Optional.empty() : Optional.of(command.trim());
    }

    private static boolean isMongos(MongoClient client) {
        try {
            Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1));
            return "isdbgrid".equals(hello.getString("msg"));
        } catch (MongoException e) {
            return false;
        }
    }

    /**
     * Why a collection cannot be sharded on this server, or empty when it can: a sharded cluster's {@code mongos}, or
     * a server with a shard command configured.
     */
    public Optional<String> unavailable() {
        if (command != null || mongos) {
            return Optional.empty();
        }
        return Optional.of("the server is no sharded cluster (no mongos answers hello) and no shard command is set"
                + " (" + COMMAND_PROPERTY + " or " + COMMAND_ENVIRONMENT + ")");
    }

    /**
     * Shards {@code collection} of {@code database} on {@code key} (the collection is created when it does not exist).
     *
     * @throws IllegalStateException where the server cannot shard ({@link #unavailable()}), or where the server or
     *                               the command refused
     */
    public void shard(MongoDatabase database, String collection, Bson key) {
        Objects.requireNonNull(database, "database");
        Objects.requireNonNull(collection, "collection");
        BsonDocument json = Objects.requireNonNull(key, "key").toBsonDocument();
        unavailable().ifPresent(reason -> {
            throw new IllegalStateException("cannot shard " + database.getName() + "." + collection + ": " + reason);
        });
        if (command != null) {
            run(database.getName(), collection, json.toJson());
            return;
        }
        MongoDatabase admin = client.getDatabase("admin");
        try {
            admin.runCommand(new Document("enableSharding", database.getName()));
        } catch (MongoCommandException e) {
            // sharding already enabled (AlreadyInitialized), or enabled implicitly since MongoDB 6.0
        }
        admin.runCommand(new Document("shardCollection", database.getName() + "." + collection).append("key", json));
    }

    private void run(String database, String collection, String key) {
        ProcessBuilder builder = new ProcessBuilder("bash", "-c", command + " \"$@\"", "shard", database, collection,
                key).redirectErrorStream(true);
        try {
            Process process = builder.start();
            byte[] output;
            try (InputStream in = process.getInputStream()) {
                output = in.readAllBytes();
            }
            if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("the shard command did not end within " + COMMAND_TIMEOUT_SECONDS
                        + " s for " + database + "." + collection);
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("the shard command failed (exit " + process.exitValue() + ") for "
                        + database + "." + collection + " on " + key + ": "
                        + new String(output, StandardCharsets.UTF_8).strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run the shard command " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sharding " + database + "." + collection, e);
        }
    }

    /**
     * The shard key of {@code collection}, as the server's catalogue ({@code config.collections}, which MongoDB and
     * the distributed engine both keep) gives it; empty when it is not sharded.
     */
    public Optional<Document> shardKey(MongoDatabase database, String collection) {
        Document entry = client.getDatabase("config").getCollection("collections")
                .find(Filters.eq("_id", database.getName() + "." + collection)).first();
        return entry == null || entry.getBoolean("dropped", false) || !(entry.get("key") instanceof Document key)
                ? Optional.empty() : Optional.of(key);
    }

    /** The sharding plan of this classpath ({@value #PLAN_RESOURCE}): collection → shard key, in the files' order. */
    public static Map<String, Document> plan() {
        return PLAN;
    }

    /**
     * Shards each collection of the {@linkplain #plan() plan} in {@code database}, a database just made, where this
     * server can shard; nothing otherwise.
     *
     * @return {@code database}
     */
    public MongoDatabase applyPlan(MongoDatabase database) {
        if (unavailable().isEmpty()) {
            PLAN.forEach((collection, key) -> shard(database, collection, key));
        }
        return database;
    }

    private static Map<String, Document> loadPlan() {
        Map<String, Document> plan = new LinkedHashMap<>();
        try {
            Enumeration<URL> files = Thread.currentThread().getContextClassLoader() != null
                    ? Thread.currentThread().getContextClassLoader().getResources(PLAN_RESOURCE)
                    : Sharding.class.getClassLoader().getResources(PLAN_RESOURCE);
            for (URL file : Collections.list(files)) {
                Properties properties = new Properties();
                try (InputStream in = file.openStream()) {
                    properties.load(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
                }
                for (String collection : new java.util.TreeSet<>(properties.stringPropertyNames())) {
                    plan.put(collection, Document.parse(properties.getProperty(collection)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + PLAN_RESOURCE, e);
        }
        return Collections.unmodifiableMap(plan);
    }
}
