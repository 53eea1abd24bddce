package dev.consistencykit.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import org.bson.BsonDocument;
import org.bson.BsonValue;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

/**
 * Captures every command the code under test sends to one database and lists those that could read without bound on
 * a large collection: a {@code find} with neither a {@code limit} nor an equality on {@code _id}, an
 * {@code aggregate} without a {@code $limit} stage (a {@code countDocuments} with a limit has one), a {@code count}
 * without a limit, a {@code distinct}; and every write, for code that must only read. Together with
 * {@link IndexCoverage} (each query served by an index) it is how a test shows that something polled costs the server
 * no scans, whatever the size of the database.
 *
 * <pre>{@code
 * try (ReadBounds bounds = ReadBounds.attach(target, db.getName())) {
 *     strategy.interrupted(Duration.ZERO, 100);   // what a page polls
 *     assertThat(bounds.unbounded(Set.of())).isEmpty();
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class ReadBounds implements CommandListener, AutoCloseable {

    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify", "create",
            "createIndexes", "drop", "dropIndexes");

    private final String databaseName;
    private final CommandListenerHub hub;
    private final List<BsonDocument> commands = new CopyOnWriteArrayList<>();

    private ReadBounds(String databaseName, CommandListenerHub hub) {
        this.databaseName = databaseName;
        this.hub = hub;
    }

    /** Starts capturing the commands {@code target}'s client sends to {@code databaseName}. */
    public static ReadBounds attach(MongoTarget target, String databaseName) {
        ReadBounds bounds = new ReadBounds(Objects.requireNonNull(databaseName, "databaseName"),
                target.commandListeners());
        target.commandListeners().add(bounds);
        return bounds;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (databaseName.equals(event.getDatabaseName())) {
            // a copy of its own: the event's document is a view of a buffer the driver reuses, and read-only
            BsonDocument command = BsonDocument.parse(event.getCommand().toJson());
            command.put("$commandName", new org.bson.BsonString(event.getCommandName()));
            commands.add(command);
        }
    }

    /** How many commands were captured. */
    public int captured() {
        return commands.size();
    }

    /**
     * The captured commands that could read without bound, or that write, each as its JSON; those on a collection
     * in {@code boundedElsewhere} (one whose every document is an operation in flight, such as a query on a sparse
     * index of in-flight entries) are left out of the read checks, never out of the write check.
     */
    public List<String> unbounded(Set<String> boundedElsewhere) {
        List<String> problems = new ArrayList<>();
        for (BsonDocument command : commands) {
            String name = command.getString("$commandName").getValue();
            BsonValue target = command.get(name);
            String collection = target != null && target.isString() ? target.asString().getValue() : "";
            if (WRITES.contains(name)) {
                problems.add("a write: " + command.toJson());
                continue;
            }
            if (boundedElsewhere.contains(collection)) {
                continue;
            }
            boolean bounded = switch (name) {
                case "find" -> command.containsKey("limit") || idEquality(command.getDocument("filter",
                        new BsonDocument()));
                case "aggregate" -> command.getArray("pipeline").stream()
                        .anyMatch(stage -> stage.asDocument().containsKey("$limit"));
                case "count" -> command.containsKey("limit");
                case "distinct" -> false;
                default -> true;   // listIndexes, hello, getMore of a bounded cursor…
            };
            if (!bounded) {
                problems.add("unbounded: " + command.toJson());
            }
        }
        return problems;
    }

    private static boolean idEquality(BsonDocument filter) {
        BsonValue id = filter.get("_id");
        if (id != null) {
            return !id.isDocument() || id.asDocument().containsKey("$eq") || id.asDocument().containsKey("$in");
        }
        return filter.containsKey("$and") && filter.getArray("$and").stream()
                .anyMatch(v -> v.isDocument() && idEquality(v.asDocument()));
    }

    /** Stops capturing. */
    @Override
    public void close() {
        hub.remove(this);
    }
}
