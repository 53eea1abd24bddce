package dev.consistencykit.testkit;

import java.util.concurrent.CopyOnWriteArrayList;

import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;

/**
 * A {@link CommandListener} that forwards to listeners added and removed at any time, so that a client created
 * once (and shared by many tests) can be observed by a {@link RoundTripCounter} attached later.
 *
 * <p>Thread-safe.
 */
public final class CommandListenerHub implements CommandListener {

    private final CopyOnWriteArrayList<CommandListener> listeners = new CopyOnWriteArrayList<>();

    /** Starts forwarding to {@code listener}. */
    public void add(CommandListener listener) {
        listeners.add(listener);
    }

    /** Stops forwarding to {@code listener}. */
    public void remove(CommandListener listener) {
        listeners.remove(listener);
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        for (CommandListener listener : listeners) {
            listener.commandStarted(event);
        }
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        for (CommandListener listener : listeners) {
            listener.commandSucceeded(event);
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        for (CommandListener listener : listeners) {
            listener.commandFailed(event);
        }
    }
}
