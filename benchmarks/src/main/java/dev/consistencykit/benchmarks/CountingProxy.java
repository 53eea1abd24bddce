package dev.consistencykit.benchmarks;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * A TCP proxy in front of a MongoDB server that counts, per database, the requests each client sends and the bytes
 * both ways, whatever the client is (the Java driver, Go's mgo, JobRunr, JaVers): it reads the wire protocol's
 * message frames, takes the database and the command's name from each request ({@code OP_MSG}'s {@code $db}, an
 * {@code OP_QUERY}'s namespace) and the reply's size from the frame answering it. Monitoring and handshakes
 * ({@code hello}, {@code isMaster}, {@code getnonce}) go to {@code admin}, so a database's figures are its
 * workload's own. Compressed messages are counted under {@value #COMPRESSED}.
 */
public final class CountingProxy implements AutoCloseable {

    /** The database compressed requests are counted under: their namespace is not readable. */
    public static final String COMPRESSED = "(compressed)";

    private static final int OP_REPLY = 1;
    private static final int OP_UPDATE = 2001;
    private static final int OP_INSERT = 2002;
    private static final int OP_QUERY = 2004;
    private static final int OP_GET_MORE = 2005;
    private static final int OP_DELETE = 2006;
    private static final int OP_COMPRESSED = 2012;
    private static final int OP_MSG = 2013;
    private static final int MAX_FRAME = 64 * 1024 * 1024;

    /**
     * What clients sent to one database: requests, bytes sent and bytes received in reply, and requests by command.
     */
    public record Traffic(long commands, long bytesSent, long bytesReceived, Map<String, Long> byCommand) {

        /** Nothing. */
        public static final Traffic NONE = new Traffic(0, 0, 0, Map.of());

        /** Copies the map. */
        public Traffic {
            byCommand = Map.copyOf(byCommand);
        }

        /** What was sent between {@code earlier} and this. */
        public Traffic since(Traffic earlier) {
            Map<String, Long> commands = new TreeMap<>(byCommand);
            earlier.byCommand.forEach((name, n) -> commands.merge(name, -n, Long::sum));
            commands.values().removeIf(n -> n == 0);
            return new Traffic(this.commands - earlier.commands, bytesSent - earlier.bytesSent,
                    bytesReceived - earlier.bytesReceived, commands);
        }

        /** This and {@code later}, added up. */
        public Traffic plus(Traffic later) {
            Map<String, Long> commands = new TreeMap<>(byCommand);
            later.byCommand.forEach((name, n) -> commands.merge(name, n, Long::sum));
            return new Traffic(this.commands + later.commands, bytesSent + later.bytesSent,
                    bytesReceived + later.bytesReceived, commands);
        }

        /** Bytes both ways. */
        public long bytes() {
            return bytesSent + bytesReceived;
        }
    }

    private static final class Counters {
        final LongAdder commands = new LongAdder();
        final LongAdder sent = new LongAdder();
        final LongAdder received = new LongAdder();
        final ConcurrentMap<String, LongAdder> byCommand = new ConcurrentHashMap<>();

        Traffic snapshot() {
            Map<String, Long> names = new TreeMap<>();
            byCommand.forEach((name, n) -> names.put(name, n.sum()));
            return new Traffic(commands.sum(), sent.sum(), received.sum(), names);
        }
    }

    private final ServerSocket listener;
    private final InetSocketAddress upstream;
    private final ConcurrentMap<String, Counters> databases = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;

    private CountingProxy(ServerSocket listener, InetSocketAddress upstream) {
        this.listener = listener;
        this.upstream = upstream;
        this.acceptor = new Thread(this::accept, "counting-proxy-accept");
        this.acceptor.setDaemon(true);
    }

    /** Starts a proxy on a free loopback port in front of {@code host:port}. */
    public static CountingProxy start(String host, int port) throws IOException {
        ServerSocket listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        CountingProxy proxy = new CountingProxy(listener, new InetSocketAddress(Objects.requireNonNull(host), port));
        proxy.acceptor.start();
        return proxy;
    }

    /** The loopback port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** What clients sent to {@code database} so far. */
    public Traffic traffic(String database) {
        Counters counters = databases.get(database);
        return counters == null ? Traffic.NONE : counters.snapshot();
    }

    private Counters counters(String database) {
        return databases.computeIfAbsent(database, d -> new Counters());
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;   // closed
            }
            Socket server = new Socket();
            try {
                server.connect(upstream, 10_000);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(server);
                continue;
            }
            sockets.add(client);
            sockets.add(server);
            ConcurrentMap<Integer, Counters> awaiting = new ConcurrentHashMap<>();
            start("counting-proxy-request", () -> pump(client, server, awaiting, true));
            start("counting-proxy-reply", () -> pump(server, client, awaiting, false));
        }
    }

    private static void start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    private void pump(Socket from, Socket to, ConcurrentMap<Integer, Counters> awaiting, boolean requests) {
        try (DataInputStream in = new DataInputStream(from.getInputStream())) {
            OutputStream out = to.getOutputStream();
            byte[] header = new byte[16];
            while (true) {
                if (!readFrameStart(in, header)) {
                    break;
                }
                ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                int length = h.getInt(0);
                if (length < 16 || length > MAX_FRAME) {
                    throw new IOException("not a MongoDB wire message: length " + length);
                }
                byte[] body = new byte[length - 16];
                in.readFully(body);
                if (requests) {
                    request(h.getInt(4), h.getInt(12), body, length, awaiting);
                } else {
                    Counters counters = awaiting.remove(h.getInt(8));
                    if (counters != null) {
                        counters.received.add(length);
                    }
                }
                out.write(header);
                out.write(body);
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // a connection reset or a frame that could not be read: the connection ends for both sides, as a
            // server would end it
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    private static boolean readFrameStart(DataInputStream in, byte[] header) throws IOException {
        int first = in.read();
        if (first < 0) {
            return false;
        }
        header[0] = (byte) first;
        try {
            in.readFully(header, 1, 15);
        } catch (EOFException e) {
            return false;
        }
        return true;
    }

    private void request(int requestId, int opCode, byte[] body, int length, ConcurrentMap<Integer, Counters> awaiting) {
        String[] target = target(opCode, body);
        Counters counters = counters(target[0]);
        counters.commands.increment();
        counters.sent.add(length);
        counters.byCommand.computeIfAbsent(target[1], n -> new LongAdder()).increment();
        boolean answered = opCode != OP_UPDATE && opCode != OP_INSERT && opCode != OP_DELETE
                && !(opCode == OP_MSG && (ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN).getInt(0) & 2) != 0);
        if (answered) {
            awaiting.put(requestId, counters);
        }
    }

    /** The database and the command's name of a request; package-private for the tests. */
    static String[] target(int opCode, byte[] body) {
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        switch (opCode) {
            case OP_MSG: {
                int end = body.length - ((b.getInt(0) & 1) != 0 ? 4 : 0);
                int at = 4;
                while (at < end) {
                    byte kind = body[at];
                    if (kind == 0) {
                        BsonDocument command = new RawBsonDocument(body, at + 1, b.getInt(at + 1));
                        String db = command.containsKey("$db") ? command.getString("$db").getValue() : "?";
                        return new String[] {db, command.getFirstKey()};
                    }
                    at += 1 + b.getInt(at + 1);   // a document sequence: its size includes itself
                }
                return new String[] {"?", "?"};
            }
            case OP_QUERY: {
                int nameEnd = cstringEnd(body, 4);
                String namespace = new String(body, 4, nameEnd - 4, StandardCharsets.UTF_8);
                int docAt = nameEnd + 1 + 8;
                String db = namespace.substring(0, Math.max(0, namespace.indexOf('.')));
                if (namespace.endsWith(".$cmd")) {
                    BsonDocument command = new RawBsonDocument(body, docAt, b.getInt(docAt));
                    String name = command.getFirstKey();
                    if (name.equals("$query") || name.equals("query")) {
                        name = command.getDocument(name).getFirstKey();
                    }
                    return new String[] {db, name};
                }
                return new String[] {db, "OP_QUERY"};
            }
            case OP_GET_MORE:
            case OP_UPDATE:
            case OP_INSERT:
            case OP_DELETE: {
                int nameEnd = cstringEnd(body, 4);
                String namespace = new String(body, 4, nameEnd - 4, StandardCharsets.UTF_8);
                return new String[] {namespace.substring(0, Math.max(0, namespace.indexOf('.'))), "op" + opCode};
            }
            case OP_COMPRESSED:
                return new String[] {COMPRESSED, "OP_COMPRESSED"};
            case OP_REPLY:
            default:
                return new String[] {"?", "op" + opCode};
        }
    }

    private static int cstringEnd(byte[] body, int from) {
        for (int i = from; i < body.length; i++) {
            if (body[i] == 0) {
                return i;
            }
        }
        throw new IllegalArgumentException("unterminated namespace");
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing: nothing more to do with it
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // closing
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
