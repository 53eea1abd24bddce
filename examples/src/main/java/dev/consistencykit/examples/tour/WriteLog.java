package dev.consistencykit.examples.tour;

import java.util.Set;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;

import dev.consistencykit.testkit.MongoTarget;

/**
 * Narrates every write command sent to one database while attached: one compact line each (what a reader of the
 * story needs: the operation, the collection, the document, the fields it changes), or the command as sent.
 */
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
        narration.wrote(compact(event.getCommandName(), event.getCommand()),
                summary(event.getCommandName(), event.getCommand()));
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

    /**
     * {@code update accounts alice: balance -2500, reservedTransactions += t-1}: the operation, the collection, the
     * document (its {@code _id}, or the first equality of the filter) and each change the update makes, values shown
     * plainly (no JSON, no escapes).
     */
    static String compact(String command, BsonDocument body) {
        String collection = body.getString(command).getValue();
        return switch (command) {
            case "insert" -> {
                BsonArray docs = body.getArray("documents", new BsonArray());
                StringBuilder ids = new StringBuilder();
                for (int i = 0; i < docs.size() && i < 4; i++) {
                    ids.append(i == 0 ? "" : ", ").append(plain(docs.get(i).asDocument().get("_id")));
                }
                String more = docs.size() > 4 ? " and " + (docs.size() - 4) + " more" : "";
                yield "insert " + collection + " " + ids + more + (docs.size() == 1
                        ? ": " + fields(docs.get(0).asDocument()) : "");
            }
            case "delete" -> {
                BsonArray deletes = body.getArray("deletes", new BsonArray());
                yield "delete " + collection + " " + (deletes.isEmpty() ? ""
                        : target(deletes.get(0).asDocument().getDocument("q", new BsonDocument())));
            }
            case "update" -> {
                BsonArray updates = body.getArray("updates", new BsonArray());
                if (updates.isEmpty()) {
                    yield "update " + collection;
                }
                BsonDocument first = updates.get(0).asDocument();
                String flags = (first.getBoolean("upsert", org.bson.BsonBoolean.FALSE).getValue() ? " (or insert)"
                        : "") + (first.getBoolean("multi", org.bson.BsonBoolean.FALSE).getValue() ? " (every match)"
                        : "");
                // the other statements of the same command, each named (one command writing several documents)
                StringBuilder more = new StringBuilder();
                for (int i = 1; i < updates.size(); i++) {
                    BsonDocument next = updates.get(i).asDocument();
                    more.append("; and ").append(target(next.getDocument("q", new BsonDocument()))).append(": ")
                            .append(changes(next.get("u")));
                }
                yield "update " + collection + " " + target(first.getDocument("q", new BsonDocument())) + ": "
                        + changes(first.get("u")) + flags + more;
            }
            default -> command + " " + collection + " " + target(body.getDocument("query", new BsonDocument()))
                    + ": " + changes(body.get("update"));
        };
    }

    /** The document a filter aims at: its {@code _id}, else its first equality, else {@code matching}. */
    private static String target(BsonDocument filter) {
        BsonValue id = equality(filter, "_id");
        if (id != null) {
            return plain(id);
        }
        for (String key : filter.keySet()) {
            if (!key.startsWith("$") && !filter.get(key).isDocument()) {
                return "where " + key + " = " + plain(filter.get(key));
            }
        }
        if (filter.get("$and") instanceof BsonArray and) {
            for (BsonValue clause : and) {
                if (clause.isDocument() && !target(clause.asDocument()).equals("(matching)")) {
                    return target(clause.asDocument());
                }
            }
        }
        return "(matching)";
    }

    private static BsonValue equality(BsonDocument filter, String field) {
        BsonValue value = filter.get(field);
        if (value != null) {
            return value.isDocument() && value.asDocument().containsKey("$eq") ? value.asDocument().get("$eq")
                    : value.isDocument() ? null : value;
        }
        if (filter.get("$and") instanceof BsonArray and) {
            for (BsonValue clause : and) {
                BsonValue found = clause.isDocument() ? equality(clause.asDocument(), field) : null;
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /** What an update changes: {@code field = value}, {@code field +n}, {@code array += value}, {@code unset f}. */
    private static String changes(BsonValue update) {
        if (update == null) {
            return "";
        }
        if (update.isArray()) {
            return "pipeline of " + update.asArray().size() + " stages";
        }
        BsonDocument u = update.asDocument();
        if (u.keySet().stream().noneMatch(k -> k.startsWith("$"))) {
            return "replace with " + fields(u);
        }
        StringBuilder out = new StringBuilder();
        for (String op : u.keySet()) {
            BsonValue v = u.get(op);
            if (!v.isDocument()) {
                continue;
            }
            for (String field : v.asDocument().keySet()) {
                BsonValue value = v.asDocument().get(field);
                String change = switch (op) {
                    case "$set" -> field + " = " + plain(value);
                    case "$setOnInsert" -> field + " = " + plain(value) + " (if new)";
                    case "$inc" -> field + " " + signed(value);
                    case "$push", "$addToSet" -> field + " += " + plain(value.isDocument()
                            && value.asDocument().containsKey("$each") ? value.asDocument().get("$each") : value);
                    case "$pull", "$pullAll" -> field + " -= " + plain(value);
                    case "$unset" -> "unset " + field;
                    case "$currentDate" -> field + " = now";
                    default -> field + " " + op.substring(1) + " " + plain(value);
                };
                out.append(out.length() == 0 ? "" : ", ").append(change);
            }
        }
        return out.toString();
    }

    private static String signed(BsonValue value) {
        String text = plain(value);
        return text.startsWith("-") ? text : "+" + text;
    }

    /** A document's fields but its {@code _id}: {@code name = Ann, balance = 10000}. */
    private static String fields(BsonDocument doc) {
        StringBuilder out = new StringBuilder();
        for (String key : doc.keySet()) {
            if (!key.equals("_id")) {
                out.append(out.length() == 0 ? "" : ", ").append(key).append(" = ").append(plain(doc.get(key)));
            }
        }
        return out.toString();
    }

    /** A value as a person reads it: strings bare, ids short, documents and arrays compact and cut. */
    static String plain(BsonValue value) {
        if (value == null) {
            return "";
        }
        String text = switch (value.getBsonType()) {
            case STRING -> value.asString().getValue();
            case OBJECT_ID -> "oid…" + value.asObjectId().getValue().toHexString().substring(18);
            case INT32 -> String.valueOf(value.asInt32().getValue());
            case INT64 -> String.valueOf(value.asInt64().getValue());
            case DOUBLE -> String.valueOf(value.asDouble().getValue());
            case BOOLEAN -> String.valueOf(value.asBoolean().getValue());
            case DATE_TIME -> "a date";
            case NULL -> "null";
            case ARRAY -> {
                StringBuilder a = new StringBuilder("[");
                for (BsonValue e : value.asArray()) {
                    a.append(a.length() == 1 ? "" : ", ").append(plain(e));
                }
                yield a.append(']').toString();
            }
            case DOCUMENT -> {
                StringBuilder d = new StringBuilder("{");
                for (String key : value.asDocument().keySet()) {
                    d.append(d.length() == 1 ? "" : ", ").append(key).append(": ")
                            .append(plain(value.asDocument().get(key)));
                }
                yield d.append('}').toString();
            }
            default -> value.getBsonType().name().toLowerCase(java.util.Locale.ROOT);
        };
        if (text.length() <= 40) {
            return text;
        }
        int space = text.lastIndexOf(' ', 39);   // cut between words, never inside one
        return (space > 10 ? text.substring(0, space) : text.substring(0, 39)) + " …";
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
