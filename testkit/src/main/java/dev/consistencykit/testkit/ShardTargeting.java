package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;

import com.mongodb.MongoException;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

/**
 * Which shards each command sent to one database reaches, as the server's own plans say: measured, not inferred from
 * the shard key. Attach it, run the operations, then {@link #calls(MongoDatabase)} asks the server to explain each
 * command seen, or, for a write (which neither the distributed DocumentDB nor every MongoDB explains alike), the query
 * of that write as a {@code find}, which is routed the same way; an insert goes to the one shard of its document.
 *
 * <p>How many shards a plan reaches: on the distributed DocumentDB, the {@code Task Count} of its Citus plan (1 for a
 * query routed to one shard, the shard count for one sent to all); on a MongoDB {@code mongos}, the shards its
 * {@code queryPlanner} lists. A plan that says neither gives {@link Call#UNKNOWN}.
 *
 * <pre>{@code
 * try (ShardTargeting targeting = ShardTargeting.attach(target, db.getName())) {
 *     strategy.transfer(transfer);
 *     targeting.calls(db).forEach(call -> log.info("{}", call));   // update accounts: 1 shard(s)
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class ShardTargeting implements CommandListener, AutoCloseable {

    private static final Set<String> EXPLAINED = Set.of("find", "aggregate", "count", "distinct");
    private static final Set<String> WRITES = Set.of("update", "delete", "findAndModify", "insert");
    private static final Pattern TASK_COUNT = Pattern.compile("\"Task Count\"\\s*:\\s*([0-9]+)");

    /**
     * One command and the shards it reached.
     *
     * @param command    the command's name ({@code update}, {@code find}…)
     * @param collection the collection it named
     * @param shards     the most shards one of its statements reached, or {@link #UNKNOWN}
     */
    public record Call(String command, String collection, int shards) {

        /** A plan that does not say how many shards it reaches. */
        public static final int UNKNOWN = -1;

        @Override
        public String toString() {
            return command + " " + collection + ": " + (shards == UNKNOWN ? "?" : shards) + " shard(s)";
        }
    }

    private final String databaseName;
    private final CommandListenerHub hub;
    private final List<BsonDocument> seen = Collections.synchronizedList(new ArrayList<>());

    private ShardTargeting(String databaseName, CommandListenerHub hub) {
        this.databaseName = databaseName;
        this.hub = hub;
    }

    /** Starts recording the commands {@code target}'s client sends to {@code databaseName}. */
    public static ShardTargeting attach(MongoTarget target, String databaseName) {
        ShardTargeting targeting = new ShardTargeting(Objects.requireNonNull(databaseName, "databaseName"),
                target.commandListeners());
        target.commandListeners().add(targeting);
        return targeting;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (databaseName.equals(event.getDatabaseName())
                && (EXPLAINED.contains(event.getCommandName()) || WRITES.contains(event.getCommandName()))) {
            seen.add(event.getCommand().clone());
        }
    }

    /** Stops recording. */
    @Override
    public void close() {
        hub.remove(this);
    }

    /** Forgets what was recorded. */
    public void reset() {
        seen.clear();
    }

    /**
     * Every command recorded, in order, each with the shards the server's plan for it reaches (explained now, in
     * {@code database}: run it after the operations, before anything moves their documents).
     */
    public List<Call> calls(MongoDatabase database) {
        List<BsonDocument> commands;
        synchronized (seen) {
            commands = List.copyOf(seen);
        }
        List<Call> calls = new ArrayList<>();
        for (BsonDocument command : commands) {
            String name = command.getFirstKey();
            String collection = command.get(name).isString() ? command.getString(name).getValue() : "?";
            calls.add(new Call(name, collection, shards(database, name, collection, command)));
        }
        return calls;
    }

    /** {@link #calls} grouped: for each command and collection, the most shards one call of it reached. */
    public Map<String, Integer> widest(MongoDatabase database) {
        Map<String, Integer> widest = new LinkedHashMap<>();
        for (Call call : calls(database)) {
            widest.merge(call.command() + " " + call.collection(), call.shards(), Math::max);
        }
        return widest;
    }

    private static int shards(MongoDatabase database, String name, String collection, BsonDocument command) {
        if (name.equals("insert")) {
            return 1;
        }
        List<BsonDocument> explained = new ArrayList<>();
        if (EXPLAINED.contains(name)) {
            BsonDocument copy = new BsonDocument();
            command.forEach((k, v) -> {
                if (!k.startsWith("$") && !k.equals("lsid") && !k.equals("txnNumber")) {
                    copy.put(k, v);
                }
            });
            explained.add(copy);
        } else {
            for (BsonDocument query : queries(name, command)) {
                explained.add(new BsonDocument("find", new BsonString(collection)).append("filter", query)
                        .append("limit", new org.bson.BsonInt32(1)));
            }
        }
        int widest = Call.UNKNOWN;
        for (BsonDocument e : explained) {
            widest = Math.max(widest, reached(database, e));
        }
        return widest;
    }

    private static List<BsonDocument> queries(String name, BsonDocument command) {
        List<BsonDocument> queries = new ArrayList<>();
        switch (name) {
            case "update", "delete" -> {
                BsonValue statements = command.get(name.equals("update") ? "updates" : "deletes");
                if (statements instanceof BsonArray array) {
                    array.forEach(s -> queries.add(s.asDocument().getDocument("q", new BsonDocument())));
                }
            }
            case "findAndModify" -> queries.add(command.getDocument("query", new BsonDocument()));
            default -> {
                // nothing to explain
            }
        }
        return queries;
    }

    private static int reached(MongoDatabase database, BsonDocument command) {
        Document plan;
        try {
            plan = database.runCommand(new Document("explain", command).append("verbosity", "queryPlanner"));
        } catch (MongoException e) {
            return Call.UNKNOWN;
        }
        String json = plan.toJson();
        Matcher counts = TASK_COUNT.matcher(json);
        int most = Call.UNKNOWN;
        while (counts.find()) {
            most = Math.max(most, Integer.parseInt(counts.group(1)));
        }
        if (most != Call.UNKNOWN) {
            return most;
        }
        if (plan.get("queryPlanner") instanceof Document planner && planner.get("winningPlan") instanceof Document win
                && win.get("shards") instanceof List<?> shards) {
            return shards.size();
        }
        if (plan.get("queryPlanner") instanceof Document planner && planner.get("winningPlan") instanceof Document win
                && "SINGLE_SHARD".equals(win.getString("stage"))) {
            return 1;
        }
        return Call.UNKNOWN;
    }
}
