package dev.consistencykit.testkit;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.bson.BsonDocument;
import org.bson.BsonValue;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;

/**
 * Counts the commands (round trips) sent to one database and the documents they wrote, through the driver's
 * {@link CommandListener}. Attach it to a {@link MongoTarget}'s client, run operations, and divide by their
 * number.
 *
 * <pre>{@code
 * try (RoundTripCounter counter = RoundTripCounter.attach(target, database.getName())) {
 *     for (int i = 0; i < 100; i++) strategy.transfer(change(i));
 *     double perOp = counter.snapshot().commandsPer(100);
 *     assertThat(perOp).isGreaterThan(1);
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class RoundTripCounter implements CommandListener, AutoCloseable {

    private static final Set<String> WRITE_COMMANDS = Set.of("insert", "update", "delete", "findAndModify");

    private final String databaseName;
    private final CommandListenerHub hub;
    private final Map<String, LongAdder> byCommand = new ConcurrentHashMap<>();
    private final LongAdder commands = new LongAdder();
    private final LongAdder written = new LongAdder();
    private final LongAdder failed = new LongAdder();

    /**
     * What was counted.
     *
     * @param commands         commands sent
     * @param documentsWritten documents inserted, modified or deleted by them
     * @param failedCommands   commands that failed
     * @param byCommand        commands sent, per command name
     */
    public record RoundTrips(long commands, long documentsWritten, long failedCommands, Map<String, Long> byCommand) {

        /** Copies the map. */
        public RoundTrips {
            byCommand = Map.copyOf(byCommand);
        }

        /** Commands per operation. */
        public double commandsPer(long operations) {
            return operations == 0 ? 0.0 : (double) commands / operations;
        }

        /** Documents written per operation. */
        public double writesPer(long operations) {
            return operations == 0 ? 0.0 : (double) documentsWritten / operations;
        }
    }

    private RoundTripCounter(String databaseName, CommandListenerHub hub) {
        this.databaseName = databaseName;
        this.hub = hub;
    }

    /** Starts counting commands that {@code target}'s client sends to {@code databaseName}. */
    public static RoundTripCounter attach(MongoTarget target, String databaseName) {
        return attach(target.commandListeners(), databaseName);
    }

    /** Starts counting commands reported to {@code hub} for {@code databaseName}. */
    public static RoundTripCounter attach(CommandListenerHub hub, String databaseName) {
        RoundTripCounter counter = new RoundTripCounter(Objects.requireNonNull(databaseName, "databaseName"),
                Objects.requireNonNull(hub, "hub"));
        hub.add(counter);
        return counter;
    }

    /** What has been counted so far. */
    public RoundTrips snapshot() {
        Map<String, Long> counts = new TreeMap<>();
        byCommand.forEach((name, adder) -> counts.put(name, adder.sum()));
        return new RoundTrips(commands.sum(), written.sum(), failed.sum(), counts);
    }

    /** Clears the counts. */
    public void reset() {
        commands.reset();
        written.reset();
        failed.reset();
        byCommand.clear();
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        if (!databaseName.equals(event.getDatabaseName())) {
            return;
        }
        commands.increment();
        byCommand.computeIfAbsent(event.getCommandName(), k -> new LongAdder()).increment();
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        if (!databaseName.equals(event.getDatabaseName()) || !WRITE_COMMANDS.contains(event.getCommandName())) {
            return;
        }
        written.add(documentsWritten(event.getCommandName(), event.getResponse()));
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        if (databaseName.equals(event.getDatabaseName())) {
            failed.increment();
        }
    }

    private static long documentsWritten(String command, BsonDocument reply) {
        switch (command) {
            case "update": {
                long modified = number(reply.get("nModified"));
                BsonValue upserted = reply.get("upserted");
                return modified + (upserted != null && upserted.isArray() ? upserted.asArray().size() : 0);
            }
            case "findAndModify": {
                BsonValue last = reply.get("lastErrorObject");
                return last != null && last.isDocument() ? number(last.asDocument().get("n")) : 0;
            }
            default:
                return number(reply.get("n"));
        }
    }

    private static long number(BsonValue value) {
        return value != null && value.isNumber() ? value.asNumber().longValue() : 0L;
    }

    /** Stops counting. */
    @Override
    public void close() {
        hub.remove(this);
    }
}
