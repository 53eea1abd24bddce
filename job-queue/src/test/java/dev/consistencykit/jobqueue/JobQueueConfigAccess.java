package dev.consistencykit.jobqueue;

/** Names the tests need from the implementation. */
final class JobQueueConfigAccess {

    static final String OUTBOX = dev.consistencykit.jobqueue.internal.JobEngine.OUTBOX;

    private JobQueueConfigAccess() {
    }
}
