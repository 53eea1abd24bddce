package dev.consistencykit.core.spi;

import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Indexes;

/**
 * How many operations of a collection are in each state, and the oldest time of each state, read by one query.
 *
 * <p>One {@code countDocuments} per state, in lifecycle order, counts an operation that moves from one state to the
 * next between two counts twice (or never, moving the other way): four transactions read as
 * {@code {initial=3, done=4}}. This reads every document once, in one aggregation that groups by the state field
 * walking the {@code _id} index (a document keeps its {@code _id}, so the walk meets it once whatever its state
 * becomes meanwhile; a walk of an index on the state could meet a moving document under both keys), so the counts
 * always add up to the operations present. It reads every operation kept: a status call is for monitoring, not for
 * every operation.
 *
 * @param counts  operations per stored state name, states with none left out
 * @param oldest  per state, the earliest value of the time field, where any document has one
 */
public record StateSnapshot(Map<String, Long> counts, Map<String, Instant> oldest) {

    /** The scan's order: an {@code _id} never changes, so a document is met once whatever happens to its state. */
    private static final Bson BY_ID = Indexes.ascending("_id");

    /** Copies the maps. */
    public StateSnapshot {
        counts = Map.copyOf(counts);
        oldest = Map.copyOf(oldest);
    }

    /**
     * Reads the snapshot of {@code collection}.
     *
     * @param stateField the field holding each document's state
     * @param timeField  the date field whose earliest value per state is kept
     */
    public static StateSnapshot of(MongoCollection<Document> collection, String stateField, String timeField) {
        Objects.requireNonNull(collection, "collection");
        Map<String, Long> counts = new HashMap<>();
        Map<String, Instant> oldest = new HashMap<>();
        for (Document group : collection.aggregate(List.of(Aggregates.group("$" + stateField,
                Accumulators.sum("n", 1L), Accumulators.min("oldest", "$" + timeField)))).hint(BY_ID)) {
            if (!(group.get("_id") instanceof String state)) {
                continue;   // a document without a state, or with a foreign one: not an operation of the pattern
            }
            counts.put(state, ((Number) group.get("n")).longValue());
            if (group.get("oldest") instanceof java.util.Date date) {
                oldest.put(state, date.toInstant());
            }
        }
        return new StateSnapshot(counts, oldest);
    }

    /** The operations in any of {@code states}. */
    public long sum(Collection<String> states) {
        return states.stream().mapToLong(s -> counts.getOrDefault(s, 0L)).sum();
    }

    /** The earliest time among {@code states}. */
    public Optional<Instant> oldestOf(Collection<String> states) {
        return states.stream().map(oldest::get).filter(Objects::nonNull).min(Instant::compareTo);
    }
}
