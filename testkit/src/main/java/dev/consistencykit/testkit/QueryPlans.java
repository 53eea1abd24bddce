package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;

/**
 * The server's plans for the queries some code sent (a test's workload, {@code bench <pattern> --plans}): every shape
 * of query (the command, its collection and its filter, sort and limit with the values left out) is recorded with one
 * sample as it was sent and the mean time its commands took; once the run is over each is read again as the
 * equivalent {@code find} (an update's, a delete's or a findAndModify's filter, sort and limit: the real engine
 * explains no write) and explained, and that read is timed against the data the run left.
 *
 * <pre>{@code
 * List<QueryPlans.Plan> plans;
 * try (QueryPlans recorder = QueryPlans.attach(target.commandListeners())) {
 *     jobs.find(eq("state", "todo")).first();
 *     plans = recorder.explain(target.client());
 * }
 * assertThat(plans).noneMatch(QueryPlans.Plan::wholeCollection);
 * }</pre>
 *
 * <p>Thread-safe while recording.
 */
public final class QueryPlans implements CommandListener, AutoCloseable {

    /** The field a benchmark's raw baseline increments: its updates are timed as {@link #RAW_BASELINE_SHAPE}. */
    public static final String RAW_FIELD = "rawBenchmark";

    /** Reads timed per shape; the median is reported. */
    private static final int TIMED_READS = 11;

    private static final Set<String> SYSTEM_DATABASES = Set.of("admin", "config", "local");

    private final CommandListenerHub hub;
    private final Map<String, Sample> samples = new ConcurrentHashMap<>();

    /** One query shape: where it was sent, the read that stands for it, and how often it was sent. */
    private record Sample(String database, String collection, String command, String shape, BsonDocument read,
                          String noPlan, LongAdder sent, LongAdder timed, LongAdder nanos) {

        /** The mean time of the commands of this shape as the code sent them, reply included, in milliseconds. */
        double meanMs() {
            long n = timed.sum();
            return n == 0 ? -1 : nanos.sum() / 1e6 / n;
        }
    }

    /** The shape the raw baseline's updates are recorded under: their times are what the others compare with. */
    public static final String RAW_BASELINE_SHAPE = "update {_id} $inc (the benchmark's raw baseline)";

    /** Commands sent and not answered yet, by request id: the shape each is timed under. */
    private final Map<Integer, Sample> inFlight = new ConcurrentHashMap<>();

    /**
     * What the server said of one query shape.
     *
     * @param database   the database it was sent to
     * @param collection its collection
     * @param shape      the command and its filter, sort and limit, each value replaced by its type
     * @param sent       how many times the run sent it
     * @param documents  documents in the collection after the run
     * @param sentMs     the mean time of its commands as the run sent them (reply included), in milliseconds; -1
     *                   when none was answered
     * @param plan       the plan's nodes, outermost first, each with the index it reads; or why there is none
     * @param examined   keys and documents the server examined where its explain says (MongoDB), otherwise -1
     * @param returned   documents the read returned (its first batch)
     * @param medianMs   the median time of {@value #TIMED_READS} reads, in milliseconds; -1 when not a read
     * @param read       the read explained and timed, as sent (with the run's values)
     */
    public record Plan(String database, String collection, String shape, long sent, long documents, double sentMs,
                       String plan, long examined, long returned, double medianMs, Document read) {

        /** Whether the server reads every document of the collection for it, whatever it returns. */
        public boolean wholeCollection() {
            return readsWholeCollection(plan);
        }

        /** The JSON object {@code bench --json --plans} prints. */
        public Document json() {
            return new Document("collection", collection).append("query", shape).append("sent", sent)
                    .append("sentMs", thousandths(sentMs)).append("documents", documents).append("plan", plan)
                    .append("wholeCollection", wholeCollection()).append("examined", examined)
                    .append("returned", returned).append("medianMs", thousandths(medianMs)).append("read", read);
        }

        private static double thousandths(double ms) {
            return Math.round(ms * 1000) / 1000.0;
        }

        /** One line of the text report. */
        public String line() {
            return String.format(java.util.Locale.ROOT, "  %s (sent %d times%s; %d documents in %s): %s%s", shape,
                    sent, sentMs < 0 ? "" : String.format(java.util.Locale.ROOT, ", %.2f ms each as sent", sentMs),
                    documents, collection, plan, medianMs < 0 ? "" : String.format(java.util.Locale.ROOT,
                    "; as a read: returned %d%s, median %.2f ms", returned, examined < 0 ? ""
                            : ", examined " + examined, medianMs));
        }
    }

    private QueryPlans(CommandListenerHub hub) {
        this.hub = hub;
    }

    /** Starts recording the queries sent through {@code hub}, to every database but the server's own. */
    public static QueryPlans attach(CommandListenerHub hub) {
        QueryPlans plans = new QueryPlans(hub);
        hub.add(plans);
        return plans;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (SYSTEM_DATABASES.contains(event.getDatabaseName())) {
            return;
        }
        BsonDocument command = event.getCommand();
        String name = event.getCommandName();
        if (!(command.get(name) instanceof BsonString target)) {
            return;
        }
        String collection = target.getValue();
        switch (name) {
            case "find" -> record(event, collection, name, command.get("filter", new BsonDocument()),
                    command.get("sort"), command.get("limit"), command.get("hint"));
            case "findAndModify" -> record(event, collection, name, command.get("query", new BsonDocument()),
                    command.get("sort"), new BsonInt32(1), null);
            case "update" -> command.getArray("updates", new BsonArray()).forEach(u -> {
                if (isRawBaseline(u)) {
                    recordAs(event, collection, name, null, RAW_BASELINE_SHAPE,
                            "no plan asked: the benchmark's raw baseline");
                    return;
                }
                boolean multi = u.asDocument().getBoolean("multi", org.bson.BsonBoolean.FALSE).getValue();
                record(event, collection, multi ? "update many" : "update", u.asDocument().get("q"), null,
                        multi ? null : new BsonInt32(1), u.asDocument().get("hint"));
            });
            case "delete" -> command.getArray("deletes", new BsonArray()).forEach(d -> record(event, collection,
                    "delete", d.asDocument().get("q"), null, d.asDocument().getNumber("limit", new BsonInt32(0))
                            .intValue() == 1 ? new BsonInt32(1) : null, d.asDocument().get("hint")));
            case "count" -> recordAs(event, collection, name, new BsonDocument("count", target)
                    .append("query", command.get("query", new BsonDocument())), "count " + shapeOf(command.get(
                    "query", new BsonDocument())), null);
            case "aggregate" -> {
                BsonArray pipeline = command.getArray("pipeline", new BsonArray());
                boolean writes = pipeline.stream().anyMatch(s -> s.isDocument() && (s.asDocument()
                        .containsKey("$out") || s.asDocument().containsKey("$merge")));
                if (!writes) {
                    BsonDocument read = new BsonDocument("aggregate", target).append("pipeline", pipeline)
                            .append("cursor", new BsonDocument());
                    if (command.get("hint") != null) {
                        read.append("hint", command.get("hint"));
                    }
                    recordAs(event, collection, name, read, "aggregate " + shapeOf(pipeline)
                            + (command.get("hint") == null ? "" : " hint " + command.get("hint").toString()), null);
                }
            }
            case "distinct" -> recordAs(event, collection, name, new BsonDocument("distinct", target)
                    .append("key", command.get("key", new BsonString(""))).append("query",
                            command.get("query", new BsonDocument())), "distinct " + command.getString("key",
                    new BsonString("")).getValue() + " " + shapeOf(command.get("query", new BsonDocument())), null);
            case "insert" -> recordAs(event, collection, name, null, "insert", "no query: a write of new documents");
            default -> {
                // not a query
            }
        }
    }

    /**
     * Whether an update statement is a benchmark's raw baseline (an {@code $inc} of {@value #RAW_FIELD}), not the
     * code's under measure.
     */
    private static boolean isRawBaseline(BsonValue statement) {
        return statement.isDocument() && statement.asDocument().get("u") instanceof BsonDocument u
                && u.get("$inc") instanceof BsonDocument inc && inc.containsKey(RAW_FIELD);
    }

    private void record(CommandStartedEvent event, String collection, String name, BsonValue filter,
                        BsonValue sort, BsonValue limit, BsonValue hint) {
        if (filter == null || !filter.isDocument()) {
            return;
        }
        BsonDocument read = new BsonDocument("find", new BsonString(collection)).append("filter", filter);
        StringBuilder shape = new StringBuilder(name).append(' ').append(shapeOf(filter));
        if (sort instanceof BsonDocument s && !s.isEmpty()) {
            read.append("sort", s);
            shape.append(" sort ").append(s.toJson());
        }
        if (limit != null && limit.isNumber() && limit.asNumber().longValue() > 0) {
            read.append("limit", limit);
            shape.append(" limit ").append(limit.asNumber().longValue());
        }
        if (hint != null && !(hint.isDocument() && hint.asDocument().isEmpty())) {
            read.append("hint", hint);
            shape.append(" hint ").append(hint.isDocument() ? hint.asDocument().toJson() : hint.toString());
        }
        recordAs(event, collection, name, read, shape.toString(), null);
    }

    private void recordAs(CommandStartedEvent event, String collection, String name, BsonDocument read,
                          String shape, String noPlan) {
        String key = event.getDatabaseName() + '\u0000' + collection + '\u0000' + shape;
        Sample sample = samples.computeIfAbsent(key, k -> new Sample(event.getDatabaseName(), collection, name,
                shape, read == null ? null : read.clone(), noPlan, new LongAdder(), new LongAdder(),
                new LongAdder()));
        sample.sent().increment();
        inFlight.putIfAbsent(event.getRequestId(), sample);   // a command of several statements: its first one's
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        Sample sample = inFlight.remove(event.getRequestId());
        if (sample != null) {
            sample.timed().increment();
            sample.nanos().add(event.getElapsedTime(java.util.concurrent.TimeUnit.NANOSECONDS));
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        inFlight.remove(event.getRequestId());
    }

    /** A filter, pipeline or value with every value replaced by its type; operators and field names kept. */
    static String shapeOf(BsonValue value) {
        if (value.isDocument()) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<String, BsonValue> e : value.asDocument().entrySet()) {
                if (b.length() > 1) {
                    b.append(", ");
                }
                b.append(fieldShape(e.getKey())).append(": ").append(shapeOf(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (value.isArray()) {
            BsonArray array = value.asArray();
            if (!array.isEmpty() && array.stream().allMatch(BsonValue::isDocument)) {
                // a pipeline's stages or an $and's conditions: in their order
                List<String> parts = new ArrayList<>();
                array.forEach(v -> parts.add(shapeOf(v)));
                return "[" + String.join(", ", parts) + "]";
            }
            Set<String> types = new TreeSet<>();
            array.forEach(v -> types.add(shapeOf(v)));
            return "[" + String.join(" | ", types) + "]";
        }
        return value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * A field path with each segment that holds a generated id (12 characters or more, a digit among them: a
     * commit's or an operation's key in a map) replaced by {@code <id>}, so that one query is one shape.
     */
    static String fieldShape(String path) {
        List<String> segments = new ArrayList<>();
        for (String segment : path.split("\\.", -1)) {
            segments.add(segment.length() >= 12 && segment.chars().anyMatch(Character::isDigit) ? "<id>" : segment);
        }
        return String.join(".", segments);
    }

    /** Stops recording. */
    @Override
    public void close() {
        hub.remove(this);
    }

    /** The databases the run sent queries to. */
    public Set<String> databases() {
        Set<String> names = new TreeSet<>();
        samples.values().forEach(s -> names.add(s.database()));
        return names;
    }

    /**
     * Stops recording, then explains and times each recorded shape on {@code client}, against the data as the run
     * left it: the most sent first.
     */
    public List<Plan> explain(MongoClient client) {
        close();
        List<Sample> all = new ArrayList<>(samples.values());
        all.sort(Comparator.comparingLong((Sample s) -> -s.sent().sum()).thenComparing(Sample::shape));
        List<Plan> plans = new ArrayList<>();
        for (Sample s : all) {
            MongoDatabase db = client.getDatabase(s.database());
            long documents = db.getCollection(s.collection()).countDocuments();
            if (s.read() == null) {
                plans.add(new Plan(s.database(), s.collection(), s.shape(), s.sent().sum(), documents,
                        s.meanMs(), s.noPlan() == null ? "no read to explain" : s.noPlan(), -1, 0, -1,
                        new Document()));
                continue;
            }
            Document read = Document.parse(s.read().toJson());
            String plan;
            long examined = -1;
            try {
                Document explained = explained(db, read);
                plan = planOf(explained);
                examined = examinedOf(explained);
            } catch (MongoException e) {
                plan = "no plan: the server refused to explain it (" + e.getCode() + ")";
            }
            long returned = 0;
            double[] ms = new double[TIMED_READS];
            for (int i = 0; i < TIMED_READS; i++) {
                long start = System.nanoTime();
                Document reply = db.runCommand(read);
                ms[i] = (System.nanoTime() - start) / 1e6;
                returned = returnedOf(db, reply);
            }
            Arrays.sort(ms);
            plans.add(new Plan(s.database(), s.collection(), s.shape(), s.sent().sum(), documents, s.meanMs(), plan,
                    examined, returned, ms[TIMED_READS / 2], read));
        }
        return plans;
    }

    private static Document explained(MongoDatabase db, Document read) {
        return db.runCommand(new Document("explain", read).append("verbosity", "executionStats"));
    }

    /**
     * The plan of {@code read} (a {@code find}, {@code count} or {@code aggregate} command) on {@code db}, with each
     * node that reads every document of its collection marked; empty when the server does not explain it (the
     * embedded server explains nothing).
     */
    static java.util.Optional<String> planOf(MongoDatabase db, Document read) {
        try {
            return java.util.Optional.of(planOf(explained(db, read)));
        } catch (MongoException e) {
            return java.util.Optional.empty();
        }
    }

    /** Whether a plan's text says it reads every document of its collection. */
    static boolean readsWholeCollection(String plan) {
        return plan.contains(WHOLE);
    }

    /** The nodes of an explained plan, outermost first, each with its index: MongoDB's stages or PostgreSQL's. */
    static String planOf(Document explained) {
        Document planner = explained.get("queryPlanner", Document.class);
        List<String> nodes = new ArrayList<>();
        if (planner != null && planner.get("Plan") instanceof Document pg) {
            postgresNodes(pg, nodes);
        } else if (planner != null && planner.get("winningPlan") instanceof Document winning) {
            mongoStages(winning, nodes);
        } else if (explained.get("stages") instanceof List<?> stages && !stages.isEmpty()
                && stages.get(0) instanceof Document first && first.get("$cursor") instanceof Document cursor) {
            return planOf(cursor);
        }
        return nodes.isEmpty() ? "no plan in the server's explain" : String.join(" > ", nodes);
    }

    private static void postgresNodes(Document node, List<String> nodes) {
        String index = node.getString("Index Name");
        nodes.add(node.getString("Node Type") + (index == null ? "" : " (" + index + ")")
                + (readsAll(node) ? WHOLE : ""));
        for (Document child : node.getList("Plans", Document.class, List.of())) {
            postgresNodes(child, nodes);
        }
    }

    private static void mongoStages(Document stage, List<String> nodes) {
        String index = stage.getString("indexName");
        nodes.add(stage.getString("stage") + (index == null ? "" : " (" + index + ")")
                + ("COLLSCAN".equals(stage.getString("stage")) ? WHOLE : ""));
        if (stage.get("inputStage") instanceof Document input) {
            mongoStages(input, nodes);
        }
        for (Document input : stage.getList("inputStages", Document.class, List.of())) {
            mongoStages(input, nodes);
        }
    }

    /**
     * How a plan's text marks a node that reads every document of its collection because no index serves the query:
     * MongoDB's {@code COLLSCAN}, which its planner takes only then, or the real engine's scan of {@code _id_} with no
     * condition. Not PostgreSQL's {@code Seq Scan}: its planner takes one by cost, also where an index serves the
     * query, for a table it counts small (measured: a collection of 50 documents and an index on the field queried).
     */
    static final String WHOLE = " [whole collection]";

    /**
     * Whether a PostgreSQL plan node is an index scan with no condition but DocumentDB's shard key, which every row of
     * an unsharded collection holds: the scan of {@code _id_} the engine plans for a filter no index serves.
     */
    private static boolean readsAll(Document node) {
        String type = String.valueOf(node.getString("Node Type"));
        if (!type.endsWith("Index Scan") && !type.endsWith("Index Only Scan")) {
            return false;
        }
        String condition = node.getString("Index Cond");
        return condition == null || condition.matches("\\(shard_key_value = '[^']*'::bigint\\)");
    }

    /** Keys plus documents examined, where the explain says (MongoDB's executionStats); otherwise -1. */
    static long examinedOf(Document explained) {
        if (explained.get("executionStats") instanceof Document stats) {
            return number(stats.get("totalKeysExamined")) + number(stats.get("totalDocsExamined"));
        }
        return -1;
    }

    private static long number(Object value) {
        return value instanceof Number n ? n.longValue() : 0;
    }

    /** The documents a read's reply returned (its first batch); a cursor left open is closed. */
    private static long returnedOf(MongoDatabase db, Document reply) {
        if (reply.get("cursor") instanceof Document cursor) {
            if (cursor.get("id") instanceof Number id && id.longValue() != 0) {
                db.runCommand(new Document("killCursors", cursor.getString("ns").substring(
                        cursor.getString("ns").indexOf('.') + 1)).append("cursors", List.of(id.longValue())));
            }
            return cursor.getList("firstBatch", Object.class, List.of()).size();
        }
        if (reply.get("values") instanceof List<?> values) {
            return values.size();
        }
        return number(reply.get("n"));
    }
}
