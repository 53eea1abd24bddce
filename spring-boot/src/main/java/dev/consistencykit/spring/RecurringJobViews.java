package dev.consistencykit.spring;

import java.util.List;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.jobqueue.JobQueue;

/**
 * The endpoint's view of a job queue's recurring jobs. Its own class, so that the endpoint loads nothing of the job
 * queue's module when the application has none.
 */
final class RecurringJobViews {

    /** The most recurring jobs listed per job queue. */
    static final int LISTED = 50;

    private RecurringJobViews() {
    }

    /** The recurring jobs of job queue {@code queue}, by name, at most {@value #LISTED}. */
    static List<RecurringJobView> of(ConsistencyStrategy<?> queue) {
        return ((JobQueue) queue).operator().recurringJobs(0, LISTED).stream().map(r -> new RecurringJobView(
                r.name(), r.schedule().toString(), r.type(), r.nextRun().map(Object::toString).orElse(null),
                r.lastRun().map(Object::toString).orElse(null),
                r.lastJob().map(j -> String.valueOf(j.value())).orElse(null))).toList();
    }
}
