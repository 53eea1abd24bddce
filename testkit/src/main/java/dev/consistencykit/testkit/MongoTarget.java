package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.mongodb.ConnectionString;
import com.mongodb.MongoException;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Checks;
import dev.consistencykit.core.spi.MongoErrors;
import dev.consistencykit.embedded.EmbeddedMongo;

/**
 * The server everything runs against: a real MongoDB given by URI, or else the embedded server.
 *
 * <p>{@link #fromEnvironment()} reads the {@code consistency.test.uri} system property, then the {@code MONGODB_URI}
 * environment variable; with neither, it starts one embedded server for the whole JVM (stopped at exit). Its
 * {@link #client()} is shared and created with a {@link CommandListenerHub}, so round trips can be counted on it.
 *
 * <p>Thread-safe.
 */
public final class MongoTarget implements AutoCloseable {

    /** The system property that points tests at a real server. */
    public static final String URI_PROPERTY = "consistency.test.uri";
    /** The environment variable that points tests and the CLI at a real server. */
    public static final String URI_ENVIRONMENT = "MONGODB_URI";

    private static final Object LOCK = new Object();
    private static MongoTarget shared;

    private final ConnectionString connectionString;
    private final EmbeddedMongo embedded;
    private final CommandListenerHub hub = new CommandListenerHub();
    private final MongoClient client;

    private MongoTarget(ConnectionString connectionString, EmbeddedMongo embedded, Duration serverTimeout) {
        this.connectionString = connectionString;
        this.embedded = embedded;
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(connectionString)
                .addCommandListener(hub)
                .applicationName("consistency-kit");
        if (serverTimeout != null) {
            long ms = serverTimeout.toMillis();
            settings.applyToClusterSettings(b -> b.serverSelectionTimeout(ms, TimeUnit.MILLISECONDS))
                    .applyToSocketSettings(b -> b.connectTimeout(ms, TimeUnit.MILLISECONDS));
        }
        this.client = MongoClients.create(settings.build());
    }

    /** How often a drop a concurrent writer refused is tried in all. */
    private static final int DROP_ATTEMPTS = 10;

    /**
     * Drops {@code db}, again when the server refused it for a concurrent writer: the distributed engine drops a
     * database's tables on every node and can meet a deadlock there ("deadlock detected") with a test's last writes
     * still settling; the drop is retried a few times, then the refusal is thrown. Every database a test, an
     * exploration or a chaos run made is dropped through this.
     */
    public static void drop(MongoDatabase db) {
        for (int attempt = 1; ; attempt++) {
            try {
                db.drop();
                return;
            } catch (MongoException e) {
                if (attempt >= DROP_ATTEMPTS || !MongoErrors.isWriteConflict(e)) {
                    throw e;
                }
                try {
                    Thread.sleep(50L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * The JVM-wide target chosen by the environment, created on first use.
     */
    public static MongoTarget fromEnvironment() {
        synchronized (LOCK) {
            if (shared == null) {
                Optional<String> uri = configuredUri();
                shared = uri.isPresent() ? forUri(uri.get()) : embedded(EmbeddedMongo.start());
                MongoTarget target = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(target::close, "consistency-kit-target-close"));
            }
            return shared;
        }
    }

    /** The URI configured by system property or environment, if any. */
    public static Optional<String> configuredUri() {
        String uri = System.getProperty(URI_PROPERTY);
        if (uri == null || uri.isBlank()) {
            uri = System.getenv(URI_ENVIRONMENT);
        }
        return uri == null || uri.isBlank() ? Optional.empty() : Optional.of(uri.trim());
    }

    /** A target for a real server. The caller closes it. */
    public static MongoTarget forUri(String uri) {
        return new MongoTarget(new ConnectionString(Objects.requireNonNull(uri, "uri")), null, null);
    }

    /**
     * A target for a real server that gives up selecting a server, or connecting to one, after
     * {@code serverTimeout} (the URI's own settings otherwise). The caller closes it.
     */
    public static MongoTarget forUri(String uri, Duration serverTimeout) {
        Checks.positive("serverTimeout", serverTimeout);
        return new MongoTarget(new ConnectionString(Objects.requireNonNull(uri, "uri")), null, serverTimeout);
    }

    /** A target for an embedded server, which closing the target also stops. */
    public static MongoTarget embedded(EmbeddedMongo server) {
        return new MongoTarget(new ConnectionString(server.connectionString()), server, null);
    }

    /** The shared client for this target. */
    public MongoClient client() {
        return client;
    }

    /** The hub every command of {@link #client()} is reported to. */
    public CommandListenerHub commandListeners() {
        return hub;
    }

    /** Whether this is the embedded server. */
    public boolean isEmbedded() {
        return embedded != null;
    }

    /** The connection string, credentials included. */
    public ConnectionString connectionString() {
        return connectionString;
    }

    /**
     * {@code embedded} for the embedded server; otherwise the URI with any credentials removed, safe to print.
     */
    public String description() {
        return isEmbedded() ? "embedded" : redact(connectionString.getConnectionString());
    }

    /**
     * A connection string with the user-info part (credentials) removed. The user info ends at the last {@code @}
     * before the options, so a password holding a {@code /} (which should be percent-encoded, and often is not) is
     * removed whole too.
     */
    public static String redact(String uri) {
        int scheme = uri.indexOf("://");
        if (scheme < 0) {
            return uri;
        }
        int start = scheme + 3;
        int options = uri.indexOf('?', start);
        int at = uri.lastIndexOf('@', options < 0 ? uri.length() - 1 : options - 1);
        if (at < start) {
            return uri;
        }
        return uri.substring(0, start) + uri.substring(at + 1);
    }

    private static final java.util.regex.Pattern URI_CREDENTIALS = java.util.regex.Pattern.compile(
            "(mongodb(?:\\+srv)?://)\\S*@");

    /** {@code text} with the credentials of every connection string in it removed, as {@link #redact} does. */
    public static String redactAll(String text) {
        return URI_CREDENTIALS.matcher(text).replaceAll("$1");
    }

    @Override
    public void close() {
        client.close();
        if (embedded != null) {
            embedded.close();
        }
    }

    /**
     * A unique database name, {@code ck_<hint>_<random>}, of at most 36 bytes: the hint keeps only ASCII letters and
     * digits, lower-cased, at most 20 of them. That leaves a test 27 bytes for a suffix of its own within the 63 bytes
     * that MongoDB and DocumentDB allow (DocumentDB refuses a longer name; MongoDB's limit is on the namespace too).
     */
    public static String freshDatabaseName(String hint) {
        String clean = Objects.requireNonNull(hint, "hint").replaceAll("[^A-Za-z0-9]", "").toLowerCase(Locale.ROOT);
        if (clean.length() > 20) {
            clean = clean.substring(0, 20);
        }
        return "ck_" + clean + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }
}
