package dev.consistencykit.jobqueue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import dev.consistencykit.core.OperationId;

/**
 * Which jobs an operator looks for with {@link JobQueueOperator#jobs}, whatever state they are in: those with given
 * ids, those of one type, those in given states, those enqueued in a time range (the server's time, as {@code
 * enqueuedAt} holds it), or any combination (every condition must hold). Each is served by an index: the ids by {@code
 * _id}, a type by the {@code type_enqueued} index, states by {@code state_enqueued}.
 *
 * <pre>{@code
 * queue.operator().jobs(JobSearch.all().ofType("email").enqueuedFrom(since), 50);
 * queue.operator().jobs(JobSearch.all().inStates(JobState.DEAD, JobState.FAILED), 50);
 * queue.operator().jobs(JobSearch.printed(List.of("6b0ad2650cb444495958755d")), 10);
 * }</pre>
 *
 * <p>Immutable. Values are matched as literal values, never as operators.
 *
 * @param type           only jobs of this type, if present
 * @param states         only jobs in these states (every state when empty)
 * @param enqueuedFrom   only jobs enqueued at or after this time, if present
 * @param enqueuedBefore only jobs enqueued before this time, if present
 * @param ids            only these jobs, if not empty
 */
public record JobSearch(Optional<String> type, Set<JobState> states, Optional<Instant> enqueuedFrom,
                        Optional<Instant> enqueuedBefore, List<OperationId> ids) {

    /**
     * @throws IllegalArgumentException for a type outside 1…{@link DeadJobs#MAX_TEXT} characters, more than
     *                                  {@link DeadJobs#MAX_IDS} ids, or a time range that ends before it starts
     */
    public JobSearch {
        Objects.requireNonNull(type, "type");
        states = states.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(Objects.requireNonNull(states, "states")));
        Objects.requireNonNull(enqueuedFrom, "enqueuedFrom");
        Objects.requireNonNull(enqueuedBefore, "enqueuedBefore");
        ids = List.copyOf(Objects.requireNonNull(ids, "ids"));
        if (ids.size() > DeadJobs.MAX_IDS) {
            throw new IllegalArgumentException("ids: " + ids.size() + " named, at most " + DeadJobs.MAX_IDS
                    + " at once");
        }
        type.ifPresent(t -> DeadJobs.checkText("type", t));
        if (enqueuedFrom.isPresent() && enqueuedBefore.isPresent()
                && !enqueuedFrom.get().isBefore(enqueuedBefore.get())) {
            throw new IllegalArgumentException("enqueued from " + enqueuedFrom.get() + " before "
                    + enqueuedBefore.get() + ": the range is empty");
        }
    }

    /** Every job. */
    public static JobSearch all() {
        return new JobSearch(Optional.empty(), Set.of(), Optional.empty(), Optional.empty(), List.of());
    }

    /**
     * The jobs whose ids print as {@code printed} ({@link OperationId#printedAs}: as the logs, the CLI, the endpoint
     * and the dashboard print them; bare hex finds a job enqueued without an id of its own).
     *
     * @throws IllegalArgumentException if none is named, one is blank, or more than {@link DeadJobs#MAX_IDS} / 2
     */
    public static JobSearch printed(Collection<String> printed) {
        return all().withIds(DeadJobs.printed(printed).ids());
    }

    /** The jobs among {@code ids}. */
    public static JobSearch ids(Collection<OperationId> ids) {
        List<OperationId> list = new ArrayList<>(Objects.requireNonNull(ids, "ids"));
        list.forEach(id -> Objects.requireNonNull(id, "an id"));
        if (list.isEmpty()) {
            throw new IllegalArgumentException("ids: name at least one job (JobSearch.all() finds every job)");
        }
        return all().withIds(list);
    }

    private JobSearch withIds(List<OperationId> value) {
        return new JobSearch(type, states, enqueuedFrom, enqueuedBefore, value);
    }

    /** These, of type {@code type} only. */
    public JobSearch ofType(String value) {
        return new JobSearch(Optional.of(Objects.requireNonNull(value, "type")), states, enqueuedFrom, enqueuedBefore,
                ids);
    }

    /** These, in one of {@code values} only. */
    public JobSearch inStates(JobState... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("states: name at least one (every state is the default)");
        }
        return new JobSearch(type, EnumSet.copyOf(List.of(values)), enqueuedFrom, enqueuedBefore, ids);
    }

    /** These, enqueued at or after {@code time} only. */
    public JobSearch enqueuedFrom(Instant time) {
        return new JobSearch(type, states, Optional.of(Objects.requireNonNull(time, "time")), enqueuedBefore, ids);
    }

    /** These, enqueued before {@code time} only. */
    public JobSearch enqueuedBefore(Instant time) {
        return new JobSearch(type, states, enqueuedFrom, Optional.of(Objects.requireNonNull(time, "time")), ids);
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        type.ifPresent(t -> parts.add("type " + t));
        if (!states.isEmpty()) {
            parts.add("state " + states.stream().map(JobState::stored).sorted().toList());
        }
        enqueuedFrom.ifPresent(t -> parts.add("enqueued from " + t));
        enqueuedBefore.ifPresent(t -> parts.add("enqueued before " + t));
        if (!ids.isEmpty()) {
            long named = ids.stream().map(OperationId::toString).distinct().count();
            parts.add(named + " id" + (named == 1 ? "" : "s"));
        }
        return parts.isEmpty() ? "all jobs" : "jobs with " + String.join(", ", parts);
    }
}
