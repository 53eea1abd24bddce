package dev.consistencykit.jobqueue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import dev.consistencykit.core.OperationId;

/**
 * Which dead jobs an operator acts on ({@link JobQueueOperator#replayDead(DeadJobs)}, {@link
 * JobQueueOperator#discardDead}, {@link JobQueueOperator#deleteDead}, {@link JobQueueOperator#dead(DeadJobs, int,
 * int)}): all of them, or those of one type, those whose last error contains a text, those with given ids, or any
 * combination (every condition must hold).
 *
 * <pre>{@code
 * queue.operator().replayDead(DeadJobs.all().ofType("email").errorContaining("timeout"));
 * queue.operator().discardDead(DeadJobs.ids(List.of(id))); }</pre>
 *
 * <p>Immutable. The values are matched as literal values, never as operators: a type or an error text holding
 * {@code $} or regular-expression characters matches exactly that text.
 *
 * @param type only jobs of this type, if present
 * @param errorContaining only jobs whose last error contains this text (case-sensitive), if present
 * @param ids only these jobs, if not empty
 */
public record DeadJobs(Optional<String> type, Optional<String> errorContaining, List<OperationId> ids) {

    /** The most ids one selection names: an operator's page, not a bulk import. */
    public static final int MAX_IDS = 1_000;

    public DeadJobs {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(errorContaining, "errorContaining");
        ids = List.copyOf(Objects.requireNonNull(ids, "ids"));
        if (ids.size() > MAX_IDS) {
            throw new IllegalArgumentException("ids: " + ids.size() + " named, at most " + MAX_IDS + " at once");
        }
        type.ifPresent(t -> checkText("type", t));
        errorContaining.ifPresent(t -> checkText("errorContaining", t));
    }

    /** The longest type or error text a selection names. */
    public static final int MAX_TEXT = 1_024;

    /** Refuses a type or text outside 1…{@link #MAX_TEXT} characters. */
    static void checkText(String what, String text) {
        if (text.isEmpty() || text.length() > MAX_TEXT) {
            throw new IllegalArgumentException(what + ": between 1 and " + MAX_TEXT + " characters, not "
                    + text.length());
        }
    }

    /** Every dead job. */
    public static DeadJobs all() {
        return new DeadJobs(Optional.empty(), Optional.empty(), List.of());
    }

    /** The dead jobs among {@code ids} (at most {@link #MAX_IDS}). */
    public static DeadJobs ids(Collection<OperationId> ids) {
        List<OperationId> list = new ArrayList<>(Objects.requireNonNull(ids, "ids"));
        list.forEach(id -> Objects.requireNonNull(id, "an id"));
        if (list.isEmpty()) {
            throw new IllegalArgumentException("ids: name at least one job (DeadJobs.all() selects every dead job)");
        }
        return new DeadJobs(Optional.empty(), Optional.empty(), list);
    }

    /**
     * The dead jobs whose ids print as {@code printed} ({@link OperationId#printedAs}: as the CLI, the logs, the
     * endpoint and the dashboard print them; bare hex selects a job enqueued without an id of its own), at most
     * {@link #MAX_IDS} / 2 of them.
     *
     * @throws IllegalArgumentException if none is named, or more than {@link #MAX_IDS} / 2
     */
    public static DeadJobs printed(Collection<String> printed) {
        Objects.requireNonNull(printed, "printed");
        if (printed.size() > MAX_IDS / 2) {
            throw new IllegalArgumentException("ids: " + printed.size() + " named, at most " + MAX_IDS / 2
                    + " at once");
        }
        List<OperationId> ids = new ArrayList<>();
        for (String p : printed) {
            if (Objects.requireNonNull(p, "an id").isBlank()) {
                throw new IllegalArgumentException("ids: a blank id names no job");
            }
            ids.addAll(OperationId.printedAs(p));
        }
        return ids(ids);
    }

    /** These, of type {@code type} only. */
    public DeadJobs ofType(String type) {
        return new DeadJobs(Optional.of(Objects.requireNonNull(type, "type")), errorContaining, ids);
    }

    /** These, whose last error contains {@code text} only. */
    public DeadJobs errorContaining(String text) {
        return new DeadJobs(type, Optional.of(Objects.requireNonNull(text, "text")), ids);
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        type.ifPresent(t -> parts.add("type " + t));
        errorContaining.ifPresent(t -> parts.add("error containing \"" + t + "\""));
        if (!ids.isEmpty()) {
            long named = ids.stream().map(OperationId::toString).distinct().count();   // as printed
            parts.add(named + " id" + (named == 1 ? "" : "s"));
        }
        return parts.isEmpty() ? "all dead jobs" : "dead jobs with " + String.join(", ", parts);
    }
}
