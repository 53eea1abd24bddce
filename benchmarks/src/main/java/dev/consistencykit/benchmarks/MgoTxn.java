package dev.consistencykit.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.bson.Document;

/**
 * mgo/txn ({@code github.com/globalsign/mgo/txn}, Go), the reference client-side two-phase commit on MongoDB: the
 * same transfers, run by the Go program in {@code benchmarks/mgotxn} as a child process that answers one JSON line per
 * request ({@code prepare}, {@code run}, {@code check}).
 */
final class MgoTxn implements Side {

    static final String DATABASE = "peers_mgotxn";

    private final Path binary;
    private final String uri;
    private Process process;
    private BufferedReader answers;
    private Writer requests;
    private int accounts;
    private Document checked = new Document();

    /**
     * @param binary the built {@code mgotxn} program
     * @param uri    the server, through the counting proxy
     */
    MgoTxn(Path binary, String uri) {
        this.binary = binary;
        // mgo's spelling of "this one server, directly"
        this.uri = uri.replace("directConnection=true", "connect=direct");
    }

    @Override
    public String name() {
        return "mgo/txn (Go)";
    }

    @Override
    public String database() {
        return DATABASE;
    }

    /** The accounts and mgo/txn's transaction documents on {@code _id}, which its runner reads and writes them by. */
    @Override
    public Map<String, String> shardKeys() {
        return Map.of("accounts", "_id", "txns", "_id");
    }

    @Override
    public void prepare(int documents) {
        if (!Files.isExecutable(binary)) {
            throw new SideUnavailableException("the mgo/txn program " + binary + " is not built (scripts/bench-peers"
                    + " builds it with Go)");
        }
        if (process == null) {
            try {
                process = new ProcessBuilder(binary.toString(), uri, DATABASE)
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            } catch (IOException e) {
                throw new SideUnavailableException("cannot start " + binary + ": " + e.getMessage(), e);
            }
            answers = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        }
        Document answer = ask("prepare " + documents + " " + Transfers.OPENING);
        if (answer.containsKey("error")) {
            throw new SideUnavailableException("mgo/txn: " + answer.getString("error"));
        }
        accounts = documents;
    }

    private Document ask(String request) {
        try {
            if (process.isAlive()) {
                requests.write(request + "\n");
                requests.flush();
            }
            String line = answers.readLine();
            if (line == null) {
                throw new SideUnavailableException("the mgo/txn program ended (exit " + exitCode() + ") on '"
                        + request + "'");
            }
            return Document.parse(line);
        } catch (IOException e) {
            throw new SideUnavailableException("the mgo/txn program is gone: " + e.getMessage(), e);
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    @Override
    public Phase run(int callers, Duration duration) {
        Document answer = ask("run " + callers + " " + duration.toMillis());
        if (answer.containsKey("error")) {
            throw new SideUnavailableException("mgo/txn: " + answer.getString("error"));
        }
        Histogram latencies = Phase.histogram();
        for (Object micros : answer.getList("latencyMicros", Object.class)) {
            latencies.recordValue(Math.max(1, ((Number) micros).longValue()));
        }
        long aborted = ((Number) answer.get("aborted")).longValue();
        long failed = ((Number) answer.get("failed")).longValue();
        String first = answer.getString("firstError");
        return new Phase(((Number) answer.get("operations")).longValue(), aborted + failed,
                first != null ? first : aborted > 0 ? aborted + " transactions aborted" : "",
                Duration.ofNanos(((Number) answer.get("elapsedNanos")).longValue()), latencies);
    }

    @Override
    public List<String> check() {
        Document answer = ask("check");
        checked = answer;
        List<String> problems = new ArrayList<>();
        if (answer.containsKey("error")) {
            problems.add("mgo/txn check: " + answer.getString("error"));
            return problems;
        }
        long total = ((Number) answer.get("total")).longValue();
        if (total != accounts * Transfers.OPENING) {
            problems.add("the balances add up to " + total + ", not " + accounts * Transfers.OPENING);
        }
        long pending = ((Number) answer.get("pending")).longValue();
        if (pending > 0) {
            problems.add(pending + " transactions still pending after ResumeAll");
        }
        return problems;
    }

    @Override
    public List<String> notes() {
        return checked.containsKey("maxTxnQueue")
                ? List.of("longest txn-queue left on an account: " + checked.get("maxTxnQueue")) : List.of();
    }

    @Override
    public void close() {
        if (process != null) {
            try {
                requests.write("quit\n");
                requests.flush();
            } catch (IOException e) {
                // already gone
            }
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
