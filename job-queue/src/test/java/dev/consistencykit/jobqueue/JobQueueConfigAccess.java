package dev.consistencykit.jobqueue;

/** Names the tests need from the implementation. */
final class JobQueueConfigAccess {

    static final String OUTBOX = dev.consistencykit.jobqueue.internal.JobSchema.OUTBOX;
    static final java.util.Set<String> EFFECT_FIELDS = dev.consistencykit.jobqueue.internal.JobSchema.EFFECT_FIELDS;

    private JobQueueConfigAccess() {
    }
}
