package dev.consistencykit.embedded;

import java.net.InetSocketAddress;

import de.bwaldvogel.mongo.MongoServer;
import dev.consistencykit.embedded.internal.ReadAtomicMemoryBackend;

/**
 * An in-process MongoDB wire-protocol server (mongo-java-server, in-memory backend) with single-document read
 * atomicity restored and equality lookups served from indexes; {@code docs/embedded-server.md} in the repository says
 * what it does and does not do faithfully. Bound to the loopback interface only.
 *
 * <pre>{@code
 * try (EmbeddedMongo server = EmbeddedMongo.start();
 *      MongoClient client = MongoClients.create(server.connectionString())) {
 *     client.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
 * }
 * }</pre>
 *
 * <p>Thread-safe. Closing it stops the server and drops every database.
 */
public final class EmbeddedMongo implements AutoCloseable {

    private static final String LOOPBACK = "127.0.0.1";

    private final MongoServer server;
    private final InetSocketAddress address;

    private EmbeddedMongo(MongoServer server, InetSocketAddress address) {
        this.server = server;
        this.address = address;
    }

    /** Starts a server on a random free loopback port. */
    public static EmbeddedMongo start() {
        return start(0);
    }

    /**
     * Starts a server on loopback {@code port} (0 for a random free port).
     *
     * @throws IllegalArgumentException if the port is out of range
     */
    public static EmbeddedMongo start(int port) {
        return start(port, client -> { });
    }

    /**
     * Starts a server on loopback {@code port} (0 for a random free port) that tells {@code onClientClosed} about
     * each client connection that closes (its remote address), cleanly or not.
     *
     * @throws IllegalArgumentException if the port is out of range
     */
    public static EmbeddedMongo start(int port, java.util.function.Consumer<String> onClientClosed) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be in [0, 65535], was " + port);
        }
        MongoServer server = new MongoServer(new ReadAtomicMemoryBackend(onClientClosed));
        server.bind(LOOPBACK, port);
        return new EmbeddedMongo(server, server.getLocalAddress());
    }

    /** The port the server listens on. */
    public int port() {
        return address.getPort();
    }

    /** A connection string for this server, e.g. {@code mongodb://127.0.0.1:41234}. */
    public String connectionString() {
        return "mongodb://" + LOOPBACK + ":" + address.getPort();
    }

    /** Stops the server, closing every client connection. */
    @Override
    public void close() {
        server.shutdownNow();
    }

    @Override
    public String toString() {
        return "EmbeddedMongo[" + connectionString() + "]";
    }
}
