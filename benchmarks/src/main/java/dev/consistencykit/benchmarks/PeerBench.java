package dev.consistencykit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import org.bson.Document;

import com.google.common.base.Splitter;
import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;

/**
 * The peer benchmark: each workload through our pattern and through the library one would otherwise use, on one
 * server, through one counting proxy, same data, same callers, same time, in interleaved phases.
 *
 * <pre>
 * PeerBench [--uri URI] [--seconds S] [--sizes 1000,10000,100000] [--callers 1,4]
 *           [--workloads two-phase,job-queue,versioning] [--mgotxn PATH] [--out DIR] [--shard]
 * </pre>
 *
 * Prints a table and one JSON line per cell, and writes {@code peers.jsonl} and {@code peers.html} to {@code --out}.
 * With {@code --shard}, each side's collections are sharded after it is prepared, as {@link Side#shardKeys()} says, on
 * a server that can shard (a {@code mongos}, or the distributed engine with {@code CONSISTENCY_KIT_SHARD_COMMAND}: see
 * the testkit's {@link Sharding}).
 */
public final class PeerBench {

    /** Phases each side's measured time is split into, alternating with the other sides. */
    static final int ROUNDS = 4;

    /** Unmeasured time each side runs at a size before it is measured: the JIT compiler competes on 2 cores. */
    static final Duration WARM_UP = Duration.ofSeconds(2);

    record Options(Optional<String> uri, int seconds, List<Integer> sizes, List<Integer> callers,
                   List<String> workloads, Path mgotxn, Path out, boolean shard) {

        static Options parse(String... args) {
            Map<String, String> given = new LinkedHashMap<>();
            boolean shard = false;
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--shard")) {
                    shard = true;
                    continue;
                }
                if (!args[i].startsWith("--") || i + 1 >= args.length) {
                    throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'");
                }
                given.put(args[i].substring(2), args[++i]);
            }
            List<String> known = List.of("uri", "seconds", "sizes", "callers", "workloads", "mgotxn", "out",
                    "shard");
            for (String name : given.keySet()) {
                if (!known.contains(name)) {
                    throw new IllegalArgumentException("unknown option --" + name + "; known: " + known);
                }
            }
            Optional<String> uri = Optional.ofNullable(given.get("uri"))
                    .or(() -> Optional.ofNullable(System.getenv(MongoTarget.URI_ENVIRONMENT)))
                    .filter(u -> !u.isBlank());
            int seconds = Integer.parseInt(given.getOrDefault("seconds", "8"));
            if (seconds < 1) {
                throw new IllegalArgumentException("--seconds must be >= 1");
            }
            List<String> workloads = Splitter.on(',').trimResults().splitToList(
                    given.getOrDefault("workloads", String.join(",", WORKLOADS.keySet())));
            for (String w : workloads) {
                if (!WORKLOADS.containsKey(w)) {
                    throw new IllegalArgumentException("unknown workload " + w + "; known: " + WORKLOADS.keySet());
                }
            }
            return new Options(uri, seconds, numbers(given.getOrDefault("sizes", "1000,10000,100000"), 2),
                    numbers(given.getOrDefault("callers", "1,4"), 1), workloads,
                    Path.of(given.getOrDefault("mgotxn", "benchmarks/target/mgotxn")),
                    Path.of(given.getOrDefault("out", "benchmarks/target/peers")), shard);
        }

        private static List<Integer> numbers(String list, int least) {
            List<Integer> numbers = Splitter.on(',').trimResults().splitToStream(list).map(Integer::parseInt).toList();
            if (numbers.isEmpty() || numbers.stream().anyMatch(n -> n < least)) {
                throw new IllegalArgumentException("expected numbers >= " + least + ", got '" + list + "'");
            }
            return numbers;
        }
    }

    /** What makes a workload's sides, ours first; the proxied connection string is for sides in another process. */
    private record Sides(String description, Function<Context, List<Side>> make) {
    }

    record Context(MongoClient client, String proxiedUri, Options options) {
    }

    static final Map<String, Sides> WORKLOADS = new LinkedHashMap<>();

    static {
        WORKLOADS.put("two-phase", new Sides("two-phase transfer (accounts)", c -> List.of(
                new Transfers.Ours(c.client()), new MgoTxn(c.options().mgotxn(), c.proxiedUri()),
                new Transfers.Native(c.client()))));
        WORKLOADS.put("job-queue", new Sides("job: enqueue, run, done (jobs waiting)", c -> List.of(
                new Jobs.Ours(c.client()), new Jobs.JobRunr(c.proxiedUri()))));
        WORKLOADS.put("versioning", new Sides("versioned tree: commit, read latest, read previous (trees)",
                c -> List.of(new Versions.Ours(c.client()), new Versions.JaVers(c.client()))));
    }

    private PeerBench() {
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
            if (options.uri().isPresent()) {
                proxied(options.uri().get(), 1);   // refuses what the proxy cannot stand in front of
                new ConnectionString(options.uri().get());
            }
        } catch (IllegalArgumentException e) {
            System.err.println("bench-peers: " + MongoTarget.redactAll(e.getMessage()));
            System.exit(2);
            return;
        }
        try {
            run(options);
        } catch (IOException | RuntimeException e) {
            // one line, no stack trace, no credential: the server was unreachable, a file could not be written
            System.err.println("bench-peers: " + MongoTarget.redactAll(Failures.describe(e)));
            if (System.getenv("CONSISTENCY_KIT_DEBUG") != null) {
                e.printStackTrace(System.err);   // asked for: CONSISTENCY_KIT_DEBUG=1, as the CLI
            }
            System.exit(4);
        }
    }

    static void run(Options options) throws IOException {
        EmbeddedMongo embedded = options.uri().isPresent() ? null : EmbeddedMongo.start();
        ConnectionString target = new ConnectionString(embedded == null ? options.uri().orElseThrow()
                : embedded.connectionString());
        com.mongodb.ServerAddress address = new com.mongodb.ServerAddress(target.getHosts().get(0));
        try (CountingProxy proxy = CountingProxy.start(address.getHost(), address.getPort())) {
            String proxied = proxied(target.getConnectionString(), proxy.port());
            try (MongoClient client = MongoClients.create(proxied)) {
                Optional<Sharding> sharding = Optional.empty();
                if (options.shard()) {
                    Sharding available = Sharding.of(client);
                    available.unavailable().ifPresent(reason -> {
                        throw new IllegalStateException("--shard: " + reason);
                    });
                    sharding = Optional.of(available);
                }
                String server = describe(client, embedded != null, target)
                        + (options.shard() ? ", each side's collections sharded (--shard)" : "");
                Files.createDirectories(options.out());
                Path jsonl = options.out().resolve("peers.jsonl");
                Files.writeString(jsonl, "");
                String machine = String.format(Locale.ROOT, "%s, %d cores, %s, Java %s", LocalDate.now(ZoneOffset.UTC),
                        Runtime.getRuntime().availableProcessors(), System.getProperty("os.arch"),
                        System.getProperty("java.version"));
                System.out.printf("# peers, measured %s on %s; %d s per side per cell in %d interleaved phases%n",
                        machine, server, options.seconds(), ROUNDS);
                List<Cell> cells = new ArrayList<>();
                for (String workload : options.workloads()) {
                    Sides sides = WORKLOADS.get(workload);
                    for (int size : options.sizes()) {
                        for (Cell cell : measure(workload + ": " + sides.description(), sides.make().apply(
                                new Context(client, proxied, options)), size, options, proxy, client, sharding)) {
                            cells.add(cell);
                            System.out.print(cell.table());
                            String line = cell.json().toJson();
                            System.out.println(line);
                            Files.writeString(jsonl, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
                        }
                    }
                }
                System.out.print(growth(cells, options.callers().get(0)));
                Path page = options.out().resolve("peers.html");
                Files.writeString(page, PeerPage.render(cells, machine, server), StandardCharsets.UTF_8);
                System.out.println("# wrote " + jsonl + " and " + page);
            }
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /** {@code uri} with its hosts replaced by the proxy's, connecting to that one server directly. */
    static String proxied(String uri, int port) {
        if (!uri.startsWith("mongodb://")) {
            throw new IllegalArgumentException("the proxy needs a mongodb:// connection string naming the server"
                    + " (for a replica set: its primary), not " + MongoTarget.redact(uri));
        }
        String rest = uri.substring("mongodb://".length());
        int at = rest.lastIndexOf('@', rest.indexOf('/') < 0 ? rest.length() : rest.indexOf('/'));
        String credentials = at < 0 ? "" : rest.substring(0, at + 1);
        String afterHosts = rest.substring(at + 1);
        int slash = afterHosts.indexOf('/');
        int question = afterHosts.indexOf('?');
        int end = slash >= 0 ? slash : question >= 0 ? question : afterHosts.length();
        String tail = afterHosts.substring(end);
        if (tail.isEmpty()) {
            tail = "/";
        }
        String options = tail.contains("?") ? "&" : (tail.startsWith("/") ? "?" : "/?");
        return "mongodb://" + credentials + "127.0.0.1:" + port + tail + options + "directConnection=true";
    }

    private static String describe(MongoClient client, boolean embedded, ConnectionString target) {
        if (embedded) {
            return "the embedded server (mongo-java-server 1.47.0, in memory, in the harness's JVM)";
        }
        Document info = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
        return "MongoDB " + info.getString("version") + " at " + MongoTarget.redact(target.getConnectionString());
    }

    /**
     * How cost grows with the documents in the collections a workload touches: per side, round trips per operation
     * and the median latency at each size, for {@code callers} callers.
     */
    static String growth(List<Cell> cells, int callers) {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "# how cost grows with the documents the"
                + " workload touches, %d caller%s: round trips per operation / p50 ms%n", callers,
                callers == 1 ? "" : "s"));
        Map<String, Map<String, Map<Integer, SideResult>>> byWorkload = new LinkedHashMap<>();
        java.util.SortedSet<Integer> sizes = new java.util.TreeSet<>();
        for (Cell cell : cells) {
            if (cell.callers() != callers) {
                continue;
            }
            sizes.add(cell.documents());
            for (SideResult side : cell.sides()) {
                byWorkload.computeIfAbsent(cell.workload(), w -> new LinkedHashMap<>())
                        .computeIfAbsent(side.name(), n -> new java.util.TreeMap<>()).put(cell.documents(), side);
            }
        }
        byWorkload.forEach((workload, sides) -> {
            out.append(String.format(Locale.ROOT, "%-42s", workload.substring(0, workload.indexOf(':'))));
            sizes.forEach(size -> out.append(String.format(Locale.ROOT, " %16s", String.format(Locale.ROOT, "%,d",
                    size))));
            out.append(System.lineSeparator());
            sides.forEach((name, bySize) -> {
                out.append(String.format(Locale.ROOT, "  %-40s", name));
                sizes.forEach(size -> {
                    SideResult side = bySize.get(size);
                    out.append(String.format(Locale.ROOT, " %16s", side == null || !side.ran() ? "-"
                            : String.format(Locale.ROOT, "%.2f / %.1f", side.roundTripsPerOp(),
                                    side.phase().latencyMillis(50))));
                });
                out.append(System.lineSeparator());
            });
        });
        return out.toString();
    }

    /** Documents per collection of {@code database}. */
    static Map<String, Long> documents(MongoClient client, String database) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        com.mongodb.client.MongoDatabase db = client.getDatabase(database);
        for (String collection : db.listCollectionNames()) {
            if (!collection.startsWith("system.")) {
                counts.put(collection, db.getCollection(collection).countDocuments());
            }
        }
        return counts;
    }

    /**
     * Shards each collection {@link Side#shardKeys()} names, filled: the server moves its documents to their shards
     * (the distributed engine redistributes an existing collection), so that both sides are measured on the same
     * documents as unsharded.
     */
    private static void shard(Sharding sharding, MongoClient client, Side side) {
        side.shardKeys().forEach((collection, field) -> sharding.shard(client.getDatabase(side.database()), collection,
                new Document(field, "hashed")));
    }

    /** Where a side's collections lived: each sharded one on its key; nothing when the run is not sharded. */
    private static List<String> placement(Side side, boolean sharded) {
        if (!sharded) {
            return List.of();
        }
        Map<String, String> keys = new java.util.TreeMap<>(side.shardKeys());
        return List.of(keys.isEmpty() ? "sharded: none of its collections"
                : "sharded: " + String.join(", ", keys.entrySet().stream().map(e -> e.getKey() + " on "
                        + e.getValue()).toList()));
    }

    /**
     * One workload at one size: every number of callers, the sides interleaved; each side's collections sharded after
     * it is prepared when {@code sharding} is given.
     */
    static List<Cell> measure(String workload, List<Side> sides, int size, Options options, CountingProxy proxy,
                              MongoClient client, Optional<Sharding> sharding) {
        List<String> failures = new ArrayList<>();
        for (Side side : sides) {
            String failure = "";
            try {
                System.err.printf("%s: preparing %s with %,d documents%n", workload, side.name(), size);
                long began = System.nanoTime();
                side.prepare(size);
                System.err.printf("%s: %s prepared in %.1f s%n", workload, side.name(),
                        (System.nanoTime() - began) / 1e9);
                sharding.ifPresent(s -> shard(s, client, side));
                side.run(options.callers().get(0), WARM_UP);
            } catch (SideUnavailableException e) {
                failure = e.getMessage();
            } catch (RuntimeException e) {
                failure = Failures.describe(e);
            }
            failures.add(failure);
        }
        List<Cell> cells = new ArrayList<>();
        try {
            List<List<SideResult>> perCallers = new ArrayList<>();
            for (int callers : options.callers()) {
                Phase[] phases = new Phase[sides.size()];
                CountingProxy.Traffic[] traffic = new CountingProxy.Traffic[sides.size()];
                Arrays.fill(phases, Phase.none());
                Arrays.fill(traffic, CountingProxy.Traffic.NONE);
                Duration phase = Duration.ofSeconds(options.seconds()).dividedBy(ROUNDS);
                for (int round = 0; round < ROUNDS; round++) {
                    for (int k = 0; k < sides.size(); k++) {
                        int s = (k + round) % sides.size();
                        if (!failures.get(s).isEmpty()) {
                            continue;
                        }
                        Side side = sides.get(s);
                        System.err.printf("%s, %,d documents, %d caller(s): %s, phase %d/%d%n", workload, size, callers,
                                side.name(), round + 1, ROUNDS);
                        CountingProxy.Traffic before = proxy.traffic(side.database());
                        try {
                            phases[s] = phases[s].plus(side.run(callers, phase));
                        } catch (RuntimeException e) {
                            failures.set(s, Failures.describe(e));
                        }
                        traffic[s] = traffic[s].plus(proxy.traffic(side.database()).since(before));
                    }
                }
                List<SideResult> results = new ArrayList<>();
                for (int s = 0; s < sides.size(); s++) {
                    results.add(failures.get(s).isEmpty()
                            ? new SideResult(sides.get(s).name(), "", phases[s], traffic[s], List.of(), Map.of(),
                                    List.of())
                            : SideResult.failed(sides.get(s).name(), failures.get(s)));
                }
                perCallers.add(results);
            }
            List<List<String>> problems = new ArrayList<>();
            List<Map<String, Long>> left = new ArrayList<>();
            List<List<String>> notes = new ArrayList<>();
            for (int s = 0; s < sides.size(); s++) {
                boolean ran = failures.get(s).isEmpty();
                problems.add(ran ? sides.get(s).check() : List.of());
                left.add(ran ? documents(client, sides.get(s).database()) : Map.of());
                List<String> sideNotes = new ArrayList<>(placement(sides.get(s), sharding.isPresent()));
                sideNotes.addAll(ran ? sides.get(s).notes() : List.of());
                notes.add(sideNotes);
            }
            for (int c = 0; c < options.callers().size(); c++) {
                List<SideResult> results = new ArrayList<>();
                for (int s = 0; s < sides.size(); s++) {
                    SideResult r = perCallers.get(c).get(s);
                    results.add(new SideResult(r.name(), r.failure(), r.phase(), r.traffic(), problems.get(s),
                            left.get(s), notes.get(s)));
                }
                cells.add(new Cell(workload, size, options.callers().get(c), options.seconds(), results));
            }
        } finally {
            for (Side side : sides) {
                side.close();
            }
        }
        return cells;
    }

}
