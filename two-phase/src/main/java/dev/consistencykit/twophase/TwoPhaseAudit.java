package dev.consistencykit.twophase;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.consistencykit.core.spi.Ids;

/**
 * What {@link TwoPhaseCommit#audit(String)} found, read from the database.
 *
 * @param problems          structural problems: a history with an illegal transition or not ending in the state, a
 *                          participant still marked by a terminal transaction, a marker naming no transaction
 * @param inFlight          transactions not terminal (normal while they run; after recovery, none should remain)
 * @param committedEffects  for each participant document ({@code collection/id}, for reading: ids that print alike
 *                          share a line here, use {@link #committedEffectsOn} to look one up), the sum of the
 *                          {@code $inc} its {@code done} transactions applied to the audited field
 * @param effectsByDocument the same sums per collection, keyed by document id with MongoDB's equality of ids
 *                          ({@code 1} finds {@code 1L}; {@code "1"} and {@code 1} are two documents)
 */
public record TwoPhaseAudit(List<String> problems, List<Object> inFlight, Map<String, Long> committedEffects,
                            Map<String, Map<Object, Long>> effectsByDocument) {

    /** Copies the collections. */
    public TwoPhaseAudit {
        problems = List.copyOf(problems);
        inFlight = List.copyOf(inFlight);
        committedEffects = Map.copyOf(committedEffects);
        Map<String, Map<Object, Long>> copy = new TreeMap<>();
        effectsByDocument.forEach((collection, effects) -> {
            Map<Object, Long> ids = new TreeMap<>(Ids.idOrder());
            ids.putAll(effects);
            copy.put(collection, Collections.unmodifiableMap(ids));
        });
        effectsByDocument = Collections.unmodifiableMap(copy);
    }

    /**
     * The committed effects on the documents of one collection, keyed by document id: a lookup by any id MongoDB
     * holds equal to a participant's finds it.
     */
    public Map<Object, Long> committedEffectsOn(String collection) {
        return effectsByDocument.getOrDefault(collection, Map.of());
    }

    /** The structural problems, plus one for every transaction still in flight. */
    public List<String> problemsWhenQuiescent() {
        List<String> all = new java.util.ArrayList<>(problems);
        inFlight.forEach(id -> all.add("transaction " + id + " not terminal"));
        return all;
    }
}
