package dev.consistencykit.embedded.internal;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A non-unique secondary index for the embedded server, which otherwise accepts such indexes and ignores them (every
 * query on a non-{@code _id} field is then a full scan under the collection lock, and cost curves measured on it say
 * nothing about MongoDB). It maps the value of the index's <em>leading</em> key (each element's, for an array: a
 * multikey index) to the positions of the documents holding it, and serves queries that require an equality on that
 * key: at the top level, inside a top-level {@code $and}, or inside {@code $elemMatch} on the array the key runs
 * through. A query that requires no such equality but a range ({@code $lt}, {@code $lte}, {@code $gt}, {@code $gte} of a
 * number, string or date) on any of the index's keys, at the top level or inside a top-level {@code $and}, is served by
 * the documents that hold a value at that key: a range of such a value matches no document where the key is missing or
 * {@code null} (MongoDB compares within a type). It reads every document that holds the key, where mongod reads only
 * those in the range's bounds, but no document without it: a claim of the next due job among the jobs that hold a
 * claim time, not among every job. The server then matches every candidate against the whole query, so the index only
 * narrows the scan and can never change a result. Other queries ({@code null}, {@code $exists}…) fall back to the full
 * scan.
 *
 * <p>Guarded by the collection's lock, like the server's own indexes.
 */
final class EqualityIndex extends Index<Integer> {

    private static final String ID_FIELD = "_id";
    private static final Set<String> RANGES = Set.of("$lt", "$lte", "$gt", "$gte");

    private final String leadingKey;
    private final String[] path;
    private final boolean usable;
    private final Map<Object, Set<Integer>> positionsByValue = new HashMap<>();
    private final Map<Object, Integer> positionById = new HashMap<>();
    private final Map<Integer, Set<Object>> valuesByPosition = new HashMap<>();
    /** Per key of the index whose path this index models: the positions of the documents holding a value there. */
    private final Map<String, Set<Integer>> holdingByKey = new HashMap<>();

    EqualityIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.leadingKey = keys.get(0).getKey();
        this.path = leadingKey.split("\\.");
        // "a.0.b" addresses an array element by position, which this index does not model: leave such keys to scans
        this.usable = modelled(leadingKey);
        for (IndexKey key : keys) {
            if (modelled(key.getKey())) {
                holdingByKey.put(key.getKey(), new HashSet<>());
            }
        }
    }

    /** Whether this index models {@code key}'s path: not one that addresses an array element by position. */
    private static boolean modelled(String key) {
        return java.util.Arrays.stream(key.split("\\.")).noneMatch(segment -> segment.chars()
                .allMatch(Character::isDigit));
    }

    /**
     * The leading key's values in {@code document}, normalized as the server compares them: one per element where the
     * path runs through arrays (multikey), {@code null} where it is missing. Walks only the leading key's path, which
     * is much cheaper than the server's general key extraction over every key of a compound index.
     */
    private Set<Object> leadingValues(Document document) {
        return valuesAt(document, path);
    }

    private static Set<Object> valuesAt(Document document, String[] path) {
        Set<Object> values = new HashSet<>();
        collect(document, path, 0, values);
        if (values.isEmpty()) {
            values.add(null);
        }
        return values;
    }

    /** Whether {@code document} holds a value other than {@code null} at {@code key}. */
    private static boolean holds(Document document, String key) {
        return valuesAt(document, key.split("\\.")).stream().anyMatch(java.util.Objects::nonNull);
    }

    private static void collect(Object current, String[] path, int depth, Set<Object> out) {
        if (depth == path.length) {
            if (current instanceof Collection<?> elements) {
                if (elements.isEmpty()) {
                    out.add(null);
                }
                for (Object element : elements) {
                    out.add(normalize(element));
                }
            } else {
                out.add(normalize(current));
            }
        } else if (current instanceof Document d) {
            if (!d.containsKey(path[depth])) {
                out.add(null);
            } else {
                collect(d.get(path[depth]), path, depth + 1, out);
            }
        } else if (current instanceof Collection<?> elements) {
            for (Object element : elements) {
                collect(element, path, depth, out);
            }
        } else {
            out.add(null);
        }
    }

    /** What the server's value normalization does: numbers compare across types, {@code -0.0} equals {@code 0.0}. */
    private static Object normalize(Object value) {
        if (value == null || value instanceof de.bwaldvogel.mongo.backend.Missing) {
            return null;
        }
        if (value instanceof Long l && (long) (double) l != l) {
            return value;
        }
        if (value instanceof Number n) {
            double d = n.doubleValue();
            return d == -0.0 ? 0.0 : d;
        }
        if (value instanceof Map<?, ?> map) {
            Document normalized = new Document();
            map.forEach((k, v) -> normalized.put(String.valueOf(k), normalize(v)));
            return normalized;
        }
        if (value instanceof Collection<?> elements) {
            return elements.stream().map(EqualityIndex::normalize).toList();
        }
        return value;
    }

    @Override
    public synchronized Integer getPosition(Document document) {
        return positionById.get(idOf(document));
    }

    @Override
    public void checkAdd(Document document, MongoCollection<Integer> collection) {
        // not unique: nothing to check
    }

    @Override
    public synchronized void add(Document document, Integer position, MongoCollection<Integer> collection) {
        positionById.put(idOf(document), position);
        link(position, leadingValues(document));
        holdings(document, position);
    }

    /** Files {@code position} under each key {@code document} holds a value at, and under no other. */
    private void holdings(Document document, Integer position) {
        holdingByKey.forEach((key, positions) -> {
            if (holds(document, key)) {
                positions.add(position);
            } else {
                positions.remove(position);
            }
        });
    }

    /** Files {@code position} under {@code values}; a sparse index leaves out a document without the key. */
    private void link(Integer position, Set<Object> values) {
        if (isSparse() && values.stream().allMatch(v -> v == null)) {
            return;
        }
        valuesByPosition.put(position, values);
        for (Object value : values) {
            positionsByValue.computeIfAbsent(value, v -> new HashSet<>()).add(position);
        }
    }

    @Override
    public synchronized Integer remove(Document document) {
        Integer position = positionById.remove(idOf(document));
        if (position != null) {
            unlink(position);
            holdingByKey.values().forEach(positions -> positions.remove(position));
        }
        return position;
    }

    private void unlink(Integer position) {
        Set<Object> values = valuesByPosition.remove(position);
        if (values == null) {
            return;
        }
        for (Object value : values) {
            Set<Integer> positions = positionsByValue.get(value);
            positions.remove(position);
            if (positions.isEmpty()) {
                positionsByValue.remove(value);
            }
        }
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        // not unique: nothing to check
    }

    @Override
    public synchronized void updateInPlace(Document oldDocument, Document newDocument, Integer position,
                                           MongoCollection<Integer> collection) {
        holdings(newDocument, position);
        Set<Object> values = leadingValues(newDocument);
        if (values.equals(leadingValues(oldDocument))) {
            return;     // the leading key did not change
        }
        unlink(position);
        link(position, values);
    }

    @Override
    public synchronized boolean canHandle(Document query) {
        return (usable && equalityValues(query, "") != null) || rangeKey(query) != null;
    }

    @Override
    public synchronized Iterable<Integer> getPositions(Document query) {
        List<Object> equal = usable ? equalityValues(query, "") : null;
        if (equal == null) {
            return new TreeSet<>(holdingByKey.get(rangeKey(query)));
        }
        TreeSet<Integer> positions = new TreeSet<>();
        for (Object value : equal) {
            positions.addAll(positionsByValue.getOrDefault(normalize(value), Set.of()));
        }
        return positions;
    }

    @Override
    public synchronized long getCount() {
        return positionById.size();
    }

    @Override
    public synchronized boolean isEmpty() {
        return positionById.isEmpty();
    }

    @Override
    public long getDataSize() {
        return 0;
    }

    @Override
    public synchronized void drop() {
        positionsByValue.clear();
        positionById.clear();
        valuesByPosition.clear();
        holdingByKey.values().forEach(Set::clear);
    }

    /**
     * The values one of which the query requires the leading key to equal (one for an equality, several for an
     * {@code $in} of plain values, as mongod's index bounds), or {@code null} if it requires no such equality.
     */
    private List<Object> equalityValues(Document query, String prefix) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            if (key.equals("$and") && value instanceof List<?> clauses) {
                for (Object clause : clauses) {
                    if (clause instanceof Document d) {
                        List<Object> found = equalityValues(d, prefix);
                        if (found != null) {
                            return found;
                        }
                    }
                }
            } else if (!key.startsWith("$")) {
                String path = prefix + key;
                if (path.equals(leadingKey) && isPlainValue(value)) {
                    return List.of(value);
                }
                if (path.equals(leadingKey) && value instanceof Document condition
                        && condition.get("$in") instanceof List<?> options && !options.isEmpty()
                        && options.stream().allMatch(EqualityIndex::isPlainValue)) {
                    return List.copyOf(options);
                }
                if (leadingKey.startsWith(path + ".") && value instanceof Document condition
                        && condition.get("$elemMatch") instanceof Document element) {
                    List<Object> found = equalityValues(element, path + ".");
                    if (found != null) {
                        return found;
                    }
                }
            }
        }
        return null;
    }

    /**
     * A key of this index on which {@code query} requires a range of a number, a string or a date (at the top level or
     * inside a top-level {@code $and}), or {@code null} if it requires none.
     */
    private String rangeKey(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (entry.getKey().equals("$and") && entry.getValue() instanceof List<?> clauses) {
                for (Object clause : clauses) {
                    String found = clause instanceof Document d ? rangeKey(d) : null;
                    if (found != null) {
                        return found;
                    }
                }
            } else if (holdingByKey.containsKey(entry.getKey()) && entry.getValue() instanceof Document condition
                    && !condition.isEmpty() && condition.entrySet().stream().allMatch(c -> RANGES.contains(c.getKey())
                    && (c.getValue() instanceof Number || c.getValue() instanceof String
                    || c.getValue() instanceof java.util.Date))) {
                return entry.getKey();
            }
        }
        return null;
    }

    /** The query value normalized as the server normalizes indexed values (numbers compare across types). */
    private static Object idOf(Document document) {
        return document.get(ID_FIELD);
    }

    /** An equality the index can look up: not null, not an operator document, a list or a regex. */
    private static boolean isPlainValue(Object value) {
        if (value == null || value instanceof Collection<?> || value instanceof Pattern
                || value instanceof BsonRegularExpression) {
            return false;
        }
        if (value instanceof Document document) {
            return document.keySet().stream().noneMatch(k -> k.startsWith("$"));
        }
        return true;
    }
}
