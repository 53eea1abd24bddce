package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

/**
 * Captures the filter of every query the code under test sends to one database (find, count, aggregate's first
 * {@code $match}, update, delete, findAndModify) and checks each against the indexes declared on its collection: a
 * query is covered when it has an equality on {@code _id}, when the first key of a declared index is one of its
 * top-level fields, or when its sort (a find's or a findAndModify's) leads with the first key of a declared index,
 * which MongoDB walks in that order, reading only the entries the filter's bounds on the index's later keys allow. The embedded server ignores secondary indexes, so without this check a missing index would only
 * show on a real server, as a collection scan. Where the server explains queries, a covered one must also be planned
 * through an index, not as a read of the whole collection: a declared index can go unread (the real engine reads
 * every document for an {@code $elemMatch} alone, though an index holds its fields; {@link QueryPlans}).
 *
 * <pre>{@code
 * try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
 *     strategy.ensureIndexes();
 *     runWorkload(strategy);
 *     assertThat(coverage.uncovered(db)).isEmpty();
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class IndexCoverage implements CommandListener, AutoCloseable {

    private final String databaseName;
    private final CommandListenerHub hub;
    private final Map<String, Set<String>> filtersByCollection = new ConcurrentHashMap<>();
    /** Per collection, the sort each captured filter was sent with (the first one seen), when it had one. */
    private final Map<String, Map<String, String>> sortsByCollection = new ConcurrentHashMap<>();

    private IndexCoverage(String databaseName, CommandListenerHub hub) {
        this.databaseName = databaseName;
        this.hub = hub;
    }

    /** Starts capturing the queries {@code target}'s client sends to {@code databaseName}. */
    public static IndexCoverage attach(MongoTarget target, String databaseName) {
        IndexCoverage coverage = new IndexCoverage(Objects.requireNonNull(databaseName, "databaseName"),
                target.commandListeners());
        target.commandListeners().add(coverage);
        return coverage;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (!databaseName.equals(event.getDatabaseName())) {
            return;
        }
        BsonDocument command = event.getCommand();
        String name = event.getCommandName();
        BsonValue target = command.get(name);
        if (target == null || !target.isString()) {
            return;
        }
        String collection = target.asString().getValue();
        switch (name) {
            case "find" -> record(collection, command.get("filter", new BsonDocument()), command.get("sort"));
            case "count" -> record(collection, command.get("query", new BsonDocument()));
            case "findAndModify" -> record(collection, command.get("query"), command.get("sort"));
            case "update" -> command.getArray("updates", new org.bson.BsonArray())
                    .forEach(u -> record(collection, u.asDocument().get("q")));
            case "delete" -> command.getArray("deletes", new org.bson.BsonArray())
                    .forEach(d -> record(collection, d.asDocument().get("q")));
            case "aggregate" -> {
                var pipeline = command.getArray("pipeline", new org.bson.BsonArray());
                if (command.get("hint") instanceof BsonDocument hint && !hint.isEmpty()) {
                    // a walk of a whole index the caller chose (a snapshot by _id): served by that index
                    record(collection, new BsonDocument(hint.getFirstKey(), new BsonDocument("$exists",
                            org.bson.BsonBoolean.TRUE)));
                } else if (!pipeline.isEmpty() && pipeline.get(0).asDocument().containsKey("$match")) {
                    record(collection, pipeline.get(0).asDocument().get("$match"));
                } else {
                    record(collection, new BsonDocument());
                }
            }
            default -> {
                // not a query
            }
        }
    }

    private void record(String collection, BsonValue filter) {
        record(collection, filter, null);
    }

    private void record(String collection, BsonValue filter, BsonValue sort) {
        if (filter == null || !filter.isDocument()) {
            return;
        }
        String json = filter.asDocument().toJson();
        filtersByCollection.computeIfAbsent(collection, c -> ConcurrentHashMap.newKeySet()).add(json);
        if (sort != null && sort.isDocument() && !sort.asDocument().isEmpty()) {
            sortsByCollection.computeIfAbsent(collection, c -> new ConcurrentHashMap<>())
                    .putIfAbsent(json, sort.asDocument().toJson());   // the event's buffer is not ours to keep
        }
    }

    /** Every captured filter, per collection. */
    public Map<String, Set<String>> captured() {
        Map<String, Set<String>> copy = new java.util.TreeMap<>();
        filtersByCollection.forEach((c, f) -> copy.put(c, new java.util.TreeSet<>(f)));
        return copy;
    }

    /**
     * The captured queries no declared index of {@code database} serves, each as {@code collection: filter}; an
     * empty filter (a whole-collection read, such as a status count) is reported too.
     */
    public List<String> uncovered(MongoDatabase database) {
        List<String> problems = new ArrayList<>();
        captured().forEach((collection, filters) -> {
            Set<String> leadingKeys = new LinkedHashSet<>();
            leadingKeys.add("_id");   // every collection has it, also one not created yet (its queries find nothing)
            for (Document index : database.getCollection(collection).listIndexes()) {
                Document key = index.get("key", Document.class);
                if (key != null && !key.isEmpty()) {
                    leadingKeys.add(key.keySet().iterator().next());
                }
            }
            for (String json : filters) {
                BsonDocument filter = BsonDocument.parse(json);
                String sortJson = sortsByCollection.getOrDefault(collection, Map.of()).get(json);
                BsonDocument sort = sortJson == null ? null : BsonDocument.parse(sortJson);
                if (!covered(filter, leadingKeys) && (sort == null || !leadingKeys.contains(sort.getFirstKey()))) {
                    problems.add(collection + ": " + json + " (leading index keys: " + leadingKeys + ")");
                } else {
                    Document find = new Document("find", collection).append("filter", Document.parse(json));
                    if (sort != null) {
                        find.append("sort", Document.parse(sortJson));
                    }
                    QueryPlans.planOf(database, find).filter(QueryPlans::readsWholeCollection).ifPresent(plan ->
                            problems.add(collection + ": " + json + " (the server reads the whole collection for it: "
                                    + plan + ")"));
                }
            }
        });
        return problems;
    }

    /**
     * Whether an index serves {@code filter}: one of its fields (its own or its {@code $and}'s) leads an index, or it
     * holds an {@code $or} (its own or its {@code $and}'s) each of whose branches an index serves.
     */
    private static boolean covered(BsonDocument filter, Set<String> leadingKeys) {
        Set<String> fields = new LinkedHashSet<>();
        collectFields(filter, fields);
        if (fields.stream().anyMatch(leadingKeys::contains)) {
            return true;
        }
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            if (e.getKey().equals("$or") && e.getValue().isArray() && !e.getValue().asArray().isEmpty()
                    && e.getValue().asArray().stream().allMatch(b -> b.isDocument()
                    && covered(b.asDocument(), leadingKeys))) {
                return true;
            }
            if (e.getKey().equals("$and") && e.getValue().isArray() && e.getValue().asArray().stream()
                    .anyMatch(b -> b.isDocument() && covered(b.asDocument(), leadingKeys))) {
                return true;
            }
        }
        return false;
    }

    private static void collectFields(BsonDocument filter, Set<String> fields) {
        collectFields(filter, "", fields);
    }

    /** Fields of a filter; those inside {@code f: {$elemMatch: {g: …}}} as {@code f.g}, as a multikey index names them. */
    private static void collectFields(BsonDocument filter, String prefix, Set<String> fields) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            if (e.getKey().equals("$and")) {
                e.getValue().asArray().forEach(v -> collectFields(v.asDocument(), prefix, fields));
            } else if (!e.getKey().startsWith("$")) {
                fields.add(prefix + e.getKey());
                BsonValue condition = e.getValue();
                if (condition.isDocument() && condition.asDocument().get("$elemMatch") instanceof BsonDocument sub) {
                    collectFields(sub, prefix + e.getKey() + ".", fields);
                }
            }
        }
    }

    /** Stops capturing. */
    @Override
    public void close() {
        hub.remove(this);
    }
}
