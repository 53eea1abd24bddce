package dev.consistencykit.examples.tour;

import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

import dev.consistencykit.testkit.MongoTarget;

/** Narrates every write command sent to one database, one short line each, while attached. */
public final class WriteLog implements CommandListener, AutoCloseable {

    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findAndModify");

    private final MongoTarget target;
    private final String databaseName;
    private final Narration narration;

    private WriteLog(MongoTarget target, String databaseName, Narration narration) {
        this.target = target;
        this.databaseName = databaseName;
        this.narration = narration;
    }

    /** Starts narrating the writes sent to {@code databaseName} of {@code target}. */
    public static WriteLog attach(MongoTarget target, String databaseName, Narration narration) {
        WriteLog log = new WriteLog(target, databaseName, narration);
        target.commandListeners().add(log);
        return log;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (!databaseName.equals(event.getDatabaseName()) || !WRITES.contains(event.getCommandName())) {
            return;
        }
        narration.wrote(summary(event.getCommandName(), event.getCommand()));
    }

    /**
     * {@code update ledger: 1 statement {…}}: the command, its collection and its first statement, whole (the
     * narration wraps it).
     */
    static String summary(String command, BsonDocument body) {
        String collection = body.getString(command).getValue();
        String detail = switch (command) {
            case "insert" -> count(body.getArray("documents", new BsonArray()), "document") + " "
                    + first(body.getArray("documents", new BsonArray()));
            case "update" -> count(body.getArray("updates", new BsonArray()), "statement") + " "
                    + first(body.getArray("updates", new BsonArray()));
            case "delete" -> count(body.getArray("deletes", new BsonArray()), "statement") + " "
                    + first(body.getArray("deletes", new BsonArray()));
            default -> "query " + json(body.get("query")) + " update " + json(body.get("update"));
        };
        return command + " " + collection + ": " + detail;
    }

    private static String count(BsonArray array, String what) {
        return array.size() + " " + what + (array.size() == 1 ? "" : "s");
    }

    private static String first(BsonArray array) {
        return array.isEmpty() ? "" : json(array.get(0));
    }

    private static String json(BsonValue value) {
        return value == null ? "" : value.isDocument() ? value.asDocument().toJson() : value.toString();
    }

    @Override
    public void close() {
        target.commandListeners().remove(this);
    }
}
