package dev.consistencykit.embedded.internal;

import java.util.Objects;
import java.util.function.Consumer;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

/**
 * The embedded server's in-memory backend with two defects of the stock one fixed through its own extension
 * points (see {@link ReadAtomicMemoryCollection}): reads hand out copies made under the collection lock, so no
 * reader can observe a document half-way through an update; a query with a plain {@code _id} equality is served
 * from the {@code _id} index, as mongod does; and the insert command reports how many documents it really inserted.
 * It does not track data sizes ({@code collStats} reports 0), which cost a fifth of the server's time on small
 * updates.
 */
public final class ReadAtomicMemoryBackend extends MemoryBackend {

    private static final java.security.SecureRandom NONCES = new java.security.SecureRandom();

    private final Consumer<String> onClientClosed;

    /** A backend that says nothing when a client's connection closes. */
    public ReadAtomicMemoryBackend() {
        this(client -> { });
    }

    /** A backend that tells {@code onClientClosed} about each client connection that closes, by its address. */
    public ReadAtomicMemoryBackend(Consumer<String> onClientClosed) {
        this.onClientClosed = Objects.requireNonNull(onClientClosed, "onClientClosed");
    }

    @Override
    public void handleClose(Channel channel) {
        super.handleClose(channel);
        onClientClosed.accept(String.valueOf(channel.remoteAddress()));
    }

    /**
     * Answers {@code hello} (what MongoDB 4.4.2+ and health checks such as Spring Boot's send) as the stock backend
     * answers the legacy {@code isMaster}, with {@code isWritablePrimary} as {@code hello} names it; and answers
     * {@code getnonce} with a nonce, as MongoDB did until 6.0: legacy drivers such as Go's mgo send it first on every
     * connection, and the stock server closes a connection on a command it does not know.
     */
    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        if ("hello".equalsIgnoreCase(command)) {
            Document answer = super.handleCommand(channel, databaseName, "isMaster", query);
            answer.put("isWritablePrimary", answer.getOrDefault("ismaster", Boolean.TRUE));
            return answer;
        }
        if ("getnonce".equalsIgnoreCase(command)) {
            Document answer = new Document("nonce", String.format("%016x", NONCES.nextLong()));
            answer.put("ok", 1.0);
            return answer;
        }
        return super.handleCommand(channel, databaseName, command, query);
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new ReadAtomicMemoryDatabase(databaseName, getCursorRegistry());
    }
}
