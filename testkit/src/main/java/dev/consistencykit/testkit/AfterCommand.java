package dev.consistencykit.testkit;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;

/**
 * Runs an action once, on the caller's thread, right after the first command the target's client sends to one
 * database succeeds: another actor's write slipped between two reads of one call, deterministically. Used to show
 * that a call which claims a point-in-time answer (a status, a consistent read) does not read across a change.
 *
 * <p>Close it to stop watching.
 */
public final class AfterCommand implements CommandListener, AutoCloseable {

    private final CommandListenerHub hub;
    private final String databaseName;
    private final Runnable action;
    private final AtomicBoolean done = new AtomicBoolean();

    private AfterCommand(CommandListenerHub hub, String databaseName, Runnable action) {
        this.hub = hub;
        this.databaseName = databaseName;
        this.action = action;
    }

    /** Watches {@code target}'s client for the next command to {@code databaseName}, then runs {@code action}. */
    public static AfterCommand once(MongoTarget target, String databaseName, Runnable action) {
        AfterCommand after = new AfterCommand(target.commandListeners(), Objects.requireNonNull(databaseName),
                Objects.requireNonNull(action));
        after.hub.add(after);
        return after;
    }

    /** Whether the action ran. */
    public boolean ran() {
        return done.get();
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        // acts on success only
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        if (databaseName.equals(event.getDatabaseName()) && done.compareAndSet(false, true)) {
            action.run();
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        // acts on success only
    }

    @Override
    public void close() {
        hub.remove(this);
    }
}
