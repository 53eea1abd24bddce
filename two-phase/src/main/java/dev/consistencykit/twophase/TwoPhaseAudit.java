package dev.consistencykit.twophase;

import java.util.List;
import java.util.Map;

/**
 * What {@link TwoPhaseCommit#audit(String)} found, read from the database.
 *
 * @param problems          structural problems: a history with an illegal transition or not ending in the state, a
 *                          participant still marked by a terminal transaction, a marker naming no transaction
 * @param inFlight          transactions not terminal (normal while they run; after recovery, none should remain)
 * @param committedEffects  for each participant document ({@code collection/id}), the sum of the {@code $inc} its
 *                          {@code done} transactions applied to the audited field
 */
public record TwoPhaseAudit(List<String> problems, List<Object> inFlight, Map<String, Long> committedEffects) {

    /** Copies the collections. */
    public TwoPhaseAudit {
        problems = List.copyOf(problems);
        inFlight = List.copyOf(inFlight);
        committedEffects = Map.copyOf(committedEffects);
    }

    /** {@link #committedEffects()} for the documents of one collection, by {@code _id} as a string. */
    public Map<Object, Long> committedEffectsOn(String collection) {
        Map<Object, Long> effects = new java.util.HashMap<>();
        String prefix = collection + "/";
        committedEffects.forEach((participant, delta) -> {
            if (participant.startsWith(prefix)) {
                effects.put(participant.substring(prefix.length()), delta);
            }
        });
        return effects;
    }

    /** The structural problems, plus one for every transaction still in flight. */
    public List<String> problemsWhenQuiescent() {
        List<String> all = new java.util.ArrayList<>(problems);
        inFlight.forEach(id -> all.add("transaction " + id + " not terminal"));
        return all;
    }
}
