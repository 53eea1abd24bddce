package dev.consistencykit.jobqueue;

import java.util.Set;

/**
 * The states of a job, stored under their names: {@code TODO → PROCESSING → DONE}; a failed attempt goes to
 * {@code FAILED} (due again after a back-off) and the last failed attempt to {@code DEAD}.
 */
public enum JobState {
    /** Enqueued, due at its run-at time. */
    TODO,
    /** Claimed by a worker, whose lease and fencing token it carries. */
    PROCESSING,
    /** Its handler succeeded. Terminal. */
    DONE,
    /** An attempt failed; due again at its run-at time. */
    FAILED,
    /** Its last attempt failed, or it can never run (no handler); kept with its error until replayed. Terminal. */
    DEAD;

    /** States a job leaves only by being worked on. */
    public static final Set<JobState> IN_FLIGHT = Set.of(TODO, PROCESSING, FAILED);

    /** Whether no worker will touch it again (unless replayed). */
    public boolean isTerminal() {
        return this == DONE || this == DEAD;
    }
}
