package dev.consistencykit.jobqueue;

import java.util.Locale;
import java.util.Set;

/**
 * The states of a job, stored in its {@code state} field under their lower-case names ({@link #stored()}), like every
 * pattern's states: {@code todo → processing → done}; a failed attempt goes to {@code failed} (due again after a
 * back-off) and the last failed attempt to {@code dead}; a job with an ordering or concurrency key starts {@code awaiting}
 * and becomes {@code todo} when its turn in its key's line comes. The same names key {@code status().counts()} and are the
 * {@code state} of an {@link dev.consistencykit.core.OperationResult}.
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
    DEAD,
    /**
     * A dead job an operator discarded: kept with its error, never run again (nor replayed); the marks of the effects
     * it applied are settled off the documents. Terminal; pruned past the retention like a done job.
     */
    DISCARDED,
    /**
     * A job with an ordering or concurrency key whose turn has not come: it is not yet among the first jobs of its
     * key's line that the key lets run (the first one for an ordering key, as many as its limit for a concurrency
     * key). No worker claims it; it becomes {@code TODO} when its turn comes.
     */
    AWAITING;

    /** States a job leaves only by being worked on (or, awaiting, by the jobs before it). */
    public static final Set<JobState> IN_FLIGHT = Set.of(TODO, PROCESSING, FAILED, AWAITING);

    /** The name stored in the database, in status counts and in results: the constant's name in lower case. */
    public String stored() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The state stored under {@code name}.
     *
     * @throws IllegalArgumentException for a name no state is stored under
     */
    public static JobState fromStored(String name) {
        for (JobState s : values()) {
            if (s.stored().equals(name)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown job state: " + name);
    }

    /** Whether no worker will touch it again (unless a dead job is replayed). */
    public boolean isTerminal() {
        return this == DONE || this == DEAD || this == DISCARDED;
    }
}
