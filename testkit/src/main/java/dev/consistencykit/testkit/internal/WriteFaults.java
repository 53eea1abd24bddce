package dev.consistencykit.testkit.internal;

import java.util.Optional;

/**
 * What a fault-injecting proxy asks at each call: whether the process is still alive, for a read whether to pause
 * first, and for a write, the fault to inject, applied before the write and after it.
 *
 * @param <F> the fault the injector decides on
 */
public interface WriteFaults<F> {

    /** Throws if the process this proxy belongs to has crashed. */
    void checkAlive(String method);

    /** Called before a read of a collection ({@code find}, {@code aggregate}…): a slow process pauses here. */
    void beforeRead(String method, String collection);

    /** The fault to inject into write {@code method} on {@code collection}, if any. */
    Optional<F> beforeWrite(String method, String collection);

    /** What happens before the faulted write is sent (a crash before it, a pause). */
    void applyBefore(F fault);

    /** What happens after the faulted write (its reply lost: a crash after it, a transient error). */
    void applyAfter(F fault);
}
