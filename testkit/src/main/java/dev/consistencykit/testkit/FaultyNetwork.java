package dev.consistencykit.testkit;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

import com.mongodb.ServerAddress;

/**
 * A TCP proxy in front of a MongoDB server that fails or hangs the calls passing through it, as a sick network or
 * server would: the connection drops before a request reaches the server, or after it was applied and before the reply;
 * a write's reply carries a write-concern error; or nothing moves until healed. Faults apply to the application's
 * commands only, never to the driver's monitoring ({@code hello}), so a fault hits the call under test.
 *
 * <pre>{@code
 * try (FaultyNetwork network = FaultyNetwork.inFrontOf(target);
 *      MongoClient client = MongoClients.create(network.connectionString())) {
 *     client.getDatabase("admin").runCommand(new Document("ping", 1));   // connected
 *     network.dropNextRequests(1);      // the next command's connection drops before it is sent on
 *     assertThatThrownBy(() -> client.getDatabase("shop").runCommand(new Document("count", "orders")))
 *             .isInstanceOf(MongoSocketException.class);   // runCommand is never retried by the driver
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class FaultyNetwork implements Closeable {

    private static final int OP_MSG = 2013;
    private static final Set<String> MONITORING = Set.of("hello", "ismaster", "isMaster", "buildinfo", "buildInfo",
            "saslStart", "saslContinue", "ping", "endSessions", "getLastError");
    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify",
            "findandmodify", "createIndexes");

    private final ServerSocket listener;
    private final ServerAddress target;
    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger dropRequests = new AtomicInteger();
    private final AtomicInteger dropReplies = new AtomicInteger();
    private final AtomicInteger writeConcernErrors = new AtomicInteger();
    private final AtomicInteger timeLimitErrors = new AtomicInteger();
    private final AtomicLong commands = new AtomicLong();
    private final AtomicLong writeConcernErrorsInjected = new AtomicLong();
    private final AtomicLong writesSinceWriteConcernError = new AtomicLong();
    private final Object hangLock = new Object();
    private volatile boolean hung;
    private volatile boolean closed;

    private FaultyNetwork(ServerSocket listener, ServerAddress target) {
        this.listener = listener;
        this.target = target;
        Thread acceptor = new Thread(this::accept, "faulty-network-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy on a free local port in front of {@code host:port}. */
    public static FaultyNetwork inFrontOf(String host, int port) {
        try {
            ServerSocket socket = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
            return new FaultyNetwork(socket, new ServerAddress(host, port));
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a local port for the proxy", e);
        }
    }

    /** A proxy in front of the first host of {@code target}. */
    public static FaultyNetwork inFrontOf(MongoTarget target) {
        ServerAddress address = new ServerAddress(target.connectionString().getHosts().get(0));
        return inFrontOf(address.getHost(), address.getPort());
    }

    /**
     * A connection string to the proxy, with short driver timeouts (2 s to select a server or connect) so that a test
     * of a sick network stays short.
     */
    public String connectionString() {
        return "mongodb://127.0.0.1:" + listener.getLocalPort()
                + "/?serverSelectionTimeoutMS=2000&connectTimeoutMS=2000&heartbeatFrequencyMS=500";
    }

    /** The next {@code n} commands are not sent on: their connection drops (the client sees a socket error). */
    public void dropNextRequests(int n) {
        dropRequests.addAndGet(n);
    }

    /** The next {@code n} commands reach the server and are applied; their connection drops before the reply. */
    public void dropNextReplies(int n) {
        dropReplies.addAndGet(n);
    }

    /** The replies of the next {@code n} writes carry a write-concern error (the write itself was applied). */
    public void writeConcernErrorOnNextWrites(int n) {
        writeConcernErrors.addAndGet(n);
    }

    /**
     * The next {@code n} commands are applied, and their reply is the server's time-limit error
     * ({@code MaxTimeMSExpired}, code 50) instead of the result.
     */
    public void timeLimitErrorOnNextCommands(int n) {
        timeLimitErrors.addAndGet(n);
    }

    /** Nothing moves, in either direction, until {@link #heal()}: a hung server. */
    public void hang() {
        hung = true;
    }

    /** Ends {@link #hang()} and clears every scheduled fault. */
    public void heal() {
        dropRequests.set(0);
        dropReplies.set(0);
        writeConcernErrors.set(0);
        timeLimitErrors.set(0);
        synchronized (hangLock) {
            hung = false;
            hangLock.notifyAll();
        }
    }

    /** Drops every open connection now (a server restart, as its clients see it). */
    public void dropConnections() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }

    /** Write-concern errors injected so far. */
    public long writeConcernErrorsInjected() {
        return writeConcernErrorsInjected.get();
    }

    /**
     * Writes acknowledged without an injected error since the last injected write-concern error: a later write's
     * write concern covers the earlier write.
     */
    public long writesAcknowledgedSinceWriteConcernError() {
        return writesSinceWriteConcernError.get();
    }

    /** Application commands seen so far. */
    public long commands() {
        return commands.get();
    }

    @Override
    public void close() {
        closed = true;
        heal();
        closeQuietly(listener);
        dropConnections();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(target.getHost(), target.getPort()), 5_000);
                sockets.add(client);
                sockets.add(server);
                Map<Integer, String> pending = new ConcurrentHashMap<>();
                start(() -> pump(client, server, pending, true), "faulty-network-up");
                start(() -> pump(server, client, pending, false), "faulty-network-down");
            } catch (IOException e) {
                if (!closed) {
                    // a failed connection to the server: the client sees its connection refused or dropped
                    continue;
                }
                return;
            }
        }
    }

    private static void start(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    /** Copies whole wire messages from {@code from} to {@code to}, applying the faults. */
    private void pump(Socket from, Socket to, Map<Integer, String> pending, boolean requests) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            DataInputStream data = new DataInputStream(in);
            while (true) {
                byte[] header = new byte[16];
                data.readFully(header);
                ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                int length = h.getInt(0);
                int requestId = h.getInt(4);
                int responseTo = h.getInt(8);
                int opCode = h.getInt(12);
                byte[] body = new byte[length - 16];
                data.readFully(body);
                awaitHealed();
                byte[] message = concat(header, body);
                if (requests) {
                    String command = opCode == OP_MSG ? commandName(body) : "";
                    boolean application = !command.isEmpty() && !MONITORING.contains(command);
                    if (application) {
                        commands.incrementAndGet();
                        if (take(dropRequests)) {
                            throw new EOFException("request dropped");
                        }
                        pending.put(requestId, command + (take(dropReplies) ? "!drop"
                                : take(timeLimitErrors) ? "!timeout" : ""));
                    }
                } else {
                    String command = pending.remove(responseTo);
                    if (command != null && command.endsWith("!drop")) {
                        throw new EOFException("reply dropped");
                    }
                    if (command != null && command.endsWith("!timeout") && opCode == OP_MSG) {
                        out.write(timeLimitError(header));
                        out.flush();
                        continue;
                    }
                    if (command != null && opCode == OP_MSG && WRITES.contains(command)) {
                        if (take(writeConcernErrors)) {
                            message = withWriteConcernError(header, body);
                            writeConcernErrorsInjected.incrementAndGet();
                            writesSinceWriteConcernError.set(0);
                        } else {
                            writesSinceWriteConcernError.incrementAndGet();
                        }
                    }
                }
                out.write(message);
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void awaitHealed() throws IOException {
        synchronized (hangLock) {
            while (hung && !closed) {
                try {
                    hangLock.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
        }
    }

    private static boolean take(AtomicInteger counter) {
        while (true) {
            int n = counter.get();
            if (n <= 0) {
                return false;
            }
            if (counter.compareAndSet(n, n - 1)) {
                return true;
            }
        }
    }

    /** The command of an OP_MSG body: the first key of its section 0 document. */
    private static String commandName(byte[] body) {
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        int position = 4;   // flag bits
        if (b.get(position) != 0) {
            return "";
        }
        position++;
        int docLength = b.getInt(position);
        ByteBuffer doc = ByteBuffer.wrap(body, position, docLength).slice().order(ByteOrder.LITTLE_ENDIAN);
        try (BsonBinaryReader reader = new BsonBinaryReader(doc)) {
            reader.readStartDocument();
            reader.readBsonType();
            return reader.readName();
        }
    }

    /** The reply with a {@code writeConcernError} added to its section 0 document. */
    private static byte[] withWriteConcernError(byte[] header, byte[] body) {
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        int flags = b.getInt(0);
        int docLength = b.getInt(5);
        byte[] docBytes = new byte[docLength];
        System.arraycopy(body, 5, docBytes, 0, docLength);
        BsonDocument reply = new BsonDocumentCodec().decode(new BsonBinaryReader(ByteBuffer.wrap(docBytes)
                .order(ByteOrder.LITTLE_ENDIAN)), DecoderContext.builder().build());
        reply.put("writeConcernError", new BsonDocument("code", new BsonInt32(64))
                .append("codeName", new BsonString("WriteConcernFailed"))
                .append("errmsg", new BsonString("waiting for replication timed out (injected)"))
                .append("errInfo", new BsonDocument("wtimeout", org.bson.BsonBoolean.TRUE)));
        RawBsonDocument raw = new RawBsonDocument(reply, new BsonDocumentCodec());
        ByteBuffer rawBytes = raw.getByteBuffer().asNIO();
        byte[] newDoc = new byte[rawBytes.remaining()];
        rawBytes.get(newDoc);
        int rest = body.length - 5 - docLength;
        ByteBuffer out = ByteBuffer.allocate(16 + 5 + newDoc.length + rest).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(16 + 5 + newDoc.length + rest);
        out.put(header, 4, 12);
        out.putInt(flags & ~1);   // no checksum: the body changed
        out.put((byte) 0);
        out.put(newDoc);
        out.put(body, 5 + docLength, rest);
        return out.array();
    }

    /** A reply saying the command ran out of time on the server. */
    private static byte[] timeLimitError(byte[] header) {
        BsonDocument reply = new BsonDocument("ok", new org.bson.BsonDouble(0))
                .append("errmsg", new BsonString("operation exceeded time limit (injected)"))
                .append("code", new BsonInt32(50)).append("codeName", new BsonString("MaxTimeMSExpired"));
        ByteBuffer rawBytes = new RawBsonDocument(reply, new BsonDocumentCodec()).getByteBuffer().asNIO();
        byte[] doc = new byte[rawBytes.remaining()];
        rawBytes.get(doc);
        ByteBuffer out = ByteBuffer.allocate(16 + 5 + doc.length).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(16 + 5 + doc.length);
        out.put(header, 4, 12);
        out.putInt(0);
        out.put((byte) 0);
        out.put(doc);
        return out.array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing a broken connection: nothing more to do
        }
    }
}
