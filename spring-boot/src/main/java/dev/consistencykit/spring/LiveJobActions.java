package dev.consistencykit.spring;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;

/**
 * The endpoint's actions on live jobs of a job queue, by id: cancel, reschedule, rerun. Its own class, so that the
 * endpoint loads nothing of the job queue's module when the application has none.
 */
final class LiveJobActions {

    /** The actions, as the endpoint's path names them. */
    static final List<String> ACTIONS = List.of("cancel", "reschedule", "rerun");

    /** What an action did: the jobs it acted on (a rerun's new ids), and the ids given that it acted on none of. */
    record Result(List<String> jobs, List<String> notFound) {
    }

    private LiveJobActions() {
    }

    /**
     * Applies {@code action} to each of {@code ids} (each as printed anywhere, tried as every id it may print as).
     *
     * @throws IllegalArgumentException for an id that names none
     */
    static Result apply(ConsistencyStrategy<?> queue, String action, List<String> ids, Instant at) {
        JobQueue jobs = (JobQueue) queue;
        List<String> acted = new ArrayList<>();
        List<String> notFound = new ArrayList<>();
        for (String printed : ids) {
            boolean any = false;
            for (OperationId id : OperationId.printedAs(printed)) {
                switch (action) {
                    case "cancel" -> any |= jobs.operator().cancel(id) && acted.add(id.toString());
                    case "reschedule" -> any |= jobs.operator().reschedule(id, at) && acted.add(id.toString());
                    case "rerun" -> {
                        var again = jobs.operator().rerun(id);
                        again.ifPresent(a -> acted.add(a.toString()));
                        any |= again.isPresent();
                    }
                    default -> throw new IllegalArgumentException("no action " + action);
                }
            }
            if (!any) {
                notFound.add(printed);
            }
        }
        return new Result(acted, notFound);
    }
}
