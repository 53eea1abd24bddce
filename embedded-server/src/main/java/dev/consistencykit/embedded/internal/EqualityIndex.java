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
 * through. The server then matches every candidate against the whole query, so the index only narrows the scan and can
 * never change a result. Other queries (ranges, {@code null}, {@code $in}…) fall back to the full scan.
 *
 * <p>Guarded by the collection's lock, like the server's own indexes.
 */
final class EqualityIndex extends Index<Integer> {

    private static final String ID_FIELD = "_id";

    private final String leadingKey;
    private final String[] path;
    private final boolean usable;
    private final Map<Object, Set<Integer>> positionsByValue = new HashMap<>();
    private final Map<Object, Integer> positionById = new HashMap<>();
    private final Map<Integer, Set<Object>> valuesByPosition = new HashMap<>();

    EqualityIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
        this.leadingKey = keys.get(0).getKey();
        this.path = leadingKey.split("\\.");
        // "a.0.b" addresses an array element by position, which this index does not model: leave such keys to scans
        this.usable = java.util.Arrays.stream(path).noneMatch(segment -> segment.chars().allMatch(Character::isDigit));
    }

    /**
     * The leading key's values in {@code document}, normalized as the server compares them: one per element where the
     * path runs through arrays (multikey), {@code null} where it is missing. Walks only the leading key's path, which
     * is much cheaper than the server's general key extraction over every key of a compound index.
     */
    private Set<Object> leadingValues(Document document) {
        Set<Object> values = new HashSet<>();
        collect(document, 0, values);
        if (values.isEmpty()) {
            values.add(null);
        }
        return values;
    }

    private void collect(Object current, int depth, Set<Object> out) {
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
                collect(d.get(path[depth]), depth + 1, out);
            }
        } else if (current instanceof Collection<?> elements) {
            for (Object element : elements) {
                collect(element, depth, out);
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
        Set<Object> values = leadingValues(newDocument);
        if (values.equals(leadingValues(oldDocument))) {
            return;     // the leading key did not change
        }
        unlink(position);
        link(position, values);
    }

    @Override
    public synchronized boolean canHandle(Document query) {
        return usable && equalityValues(query, "") != null;
    }

    @Override
    public synchronized Iterable<Integer> getPositions(Document query) {
        TreeSet<Integer> positions = new TreeSet<>();
        for (Object value : equalityValues(query, "")) {
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
