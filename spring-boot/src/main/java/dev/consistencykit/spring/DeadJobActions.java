package dev.consistencykit.spring;

import java.util.List;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.jobqueue.DeadJobs;
import dev.consistencykit.jobqueue.JobQueue;

/**
 * The endpoint's dead-letter actions on a job queue. Its own class, so that the endpoint loads nothing of the job
 * queue's module when the application has none.
 */
final class DeadJobActions {

    /** What an action did: the selection, in words, and how many jobs it moved. */
    record Result(String selection, long jobs) {
    }

    private DeadJobActions() {
    }

    /**
     * Applies {@code action} ({@code replay}, {@code discard}, {@code delete}) to the dead jobs of {@code queue} that
     * the arguments select.
     *
     * @throws IllegalArgumentException for a selection {@link DeadJobs} refuses
     */
    static Result apply(ConsistencyStrategy<?> queue, String action, String type, String errorContaining,
                        List<String> ids) {
        JobQueue jobs = (JobQueue) queue;
        // each id as printed anywhere: bare hex selects a job enqueued without an id of its own
        DeadJobs which = ids.isEmpty() ? DeadJobs.all() : DeadJobs.printed(ids);
        if (type != null) {
            which = which.ofType(type);
        }
        if (errorContaining != null) {
            which = which.errorContaining(errorContaining);
        }
        long n = switch (action) {
            case "replay" -> jobs.operator().replayDead(which);
            case "discard" -> jobs.operator().discardDead(which);
            case "delete" -> jobs.operator().deleteDead(which);
            default -> throw new IllegalArgumentException("no action " + action);
        };
        return new Result(which.toString(), n);
    }
}
