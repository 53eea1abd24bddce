package dev.consistencykit.embedded.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * A memory collection with single-document read atomicity and {@code _id}-index lookups.
 *
 * <p><b>Torn reads.</b> The stock collection returns its live stored documents from a query; the server
 * serialises them to the wire after the collection lock is released, so a concurrent update that mutates the
 * stored document in place can be observed half-way (docs/embedded-server.md, torn reads). Here every document that
 * leaves the collection — a query's results, a cursor's later batches, a findAndModify's returned value — is a
 * deep copy taken while the collection lock is held. The collection's own write paths (update, findAndModify,
 * delete) also query through {@link #handleQuery} and must get the live documents to mutate them; they run under
 * the same lock, and mark that with {@link #internalDepth}.
 *
 * <p><b>{@code _id} lookups.</b> The stock collection uses a unique index only when the query's keys equal the
 * index's keys exactly, so {@code {_id: X, state: "pending"}} scans the whole collection. Here a query with a plain
 * {@code _id} equality (or a plain {@code _id: {$in: [...]}}) is narrowed through the {@code _id} index to those
 * documents, which are then matched against the whole filter, as mongod does.
 */
final class ReadAtomicMemoryCollection extends MemoryCollection {

    /** Nesting depth of the collection's own write paths on the lock-holding thread. Guarded by {@code this}. */
    private int internalDepth;

    ReadAtomicMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                               CursorRegistry cursorRegistry) {
        super(database, collectionName, options, cursorRegistry);
    }

    @Override
    public synchronized QueryResult handleQuery(QueryParameters queryParameters) {
        QueryResult result = super.handleQuery(queryParameters);
        if (internalDepth > 0) {
            return result;
        }
        List<Document> copies = new ArrayList<>();
        for (Document document : result) {
            copies.add(document.cloneDeeply());
        }
        return new QueryResult(copies, result.getCursorId());
    }

    @Override
    protected Cursor createCursor(List<Document> remainingDocuments) {
        // Later batches are served after the lock is released: hand the cursor copies, taken now.
        List<Document> copies = new ArrayList<>(remainingDocuments.size());
        for (Document document : remainingDocuments) {
            copies.add(document.cloneDeeply());
        }
        return super.createCursor(copies);
    }

    @Override
    public synchronized Document findAndModify(Document query) {
        internalDepth++;
        try {
            Document result = super.findAndModify(query);
            Object value = result.get("value");
            if (value instanceof Document document) {
                result.put("value", document.cloneDeeply());
            }
            return result;
        } finally {
            internalDepth--;
        }
    }

    @Override
    public synchronized Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                                 boolean isMulti, boolean isUpsert, Oplog oplog) {
        internalDepth++;
        try {
            return super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog);
        } finally {
            internalDepth--;
        }
    }

    @Override
    public synchronized int deleteDocuments(Document selector, int limit, Oplog oplog) {
        internalDepth++;
        try {
            return super.deleteDocuments(selector, limit, oplog);
        } finally {
            internalDepth--;
        }
    }

    /**
     * The stock collection re-encodes the old and the new document on every write only to keep the data-size
     * statistic of {@code collStats}; that was a fifth of the server's time on small guarded updates. The size limit
     * of a document is enforced when a request is decoded, not here, so only the statistic is lost (reported as 0).
     */
    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    /**
     * The stock collection sorts every match and then takes the first; for the first one alone (a claim's
     * {@code findOneAndUpdate} with a sort) the smallest is enough, found in one pass. The same document comes out:
     * the first of equal ones, in the order the matches are met, as a stable sort would put first.
     */
    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documents, int numberToSkip,
                                                   int limit, int batchSize, Comparator<Document> comparator,
                                                   Document fieldSelector) {
        if (comparator == null || numberToSkip > 0 || limit != 1) {
            return super.matchDocumentsFromStream(query, documents, numberToSkip, limit, batchSize, comparator,
                    fieldSelector);
        }
        Optional<Document> first = documents.filter(d -> documentMatchesQuery(d, query)).min(comparator);
        return super.matchDocumentsFromStream(query, first.stream(), 0, 1, batchSize, null, fieldSelector);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
        Object id = idEquality(query);
        if (id != null && !(query.size() == 1 && query.containsKey(getIdField()))) {
            Index<Integer> idIndex = idIndex();
            if (idIndex != null) {
                Iterable<Integer> positions = idIndex.getPositions(new Document(getIdField(), id));
                return matchDocuments(query, positions, orderBy, numberToSkip, limit, batchSize, fieldSelector);
            }
        }
        List<?> ids = id == null ? idIn(query) : null;
        if (ids != null) {
            Index<Integer> idIndex = idIndex();
            if (idIndex != null) {
                // each value looked up in the index, as mongod walks the _id index for an $in: a release of 64
                // records in a collection of 100,000 reads 64 documents, not 100,000
                java.util.Set<Integer> positions = new java.util.LinkedHashSet<>();
                for (Object value : ids) {
                    idIndex.getPositions(new Document(getIdField(), value)).forEach(positions::add);
                }
                return matchDocuments(query, positions, orderBy, numberToSkip, limit, batchSize, fieldSelector);
            }
        }
        return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * The values of a plain {@code _id: {$in: [...]}} the whole query requires (at the top level or inside a top-level
     * {@code $and}), every one a plain value; {@code null} if there is none.
     */
    private List<?> idIn(Document query) {
        if (query.get(getIdField()) instanceof Document condition && condition.size() == 1
                && condition.get("$in") instanceof List<?> values && values.stream().allMatch(
                        ReadAtomicMemoryCollection::isPlainValue)) {
            return values;
        }
        if (query.get("$and") instanceof List<?> clauses) {
            for (Object clause : clauses) {
                if (clause instanceof Document d) {
                    List<?> nested = idIn(d);
                    if (nested != null) {
                        return nested;
                    }
                }
            }
        }
        return null;
    }

    /**
     * The value of a plain {@code _id} equality the whole query requires: at the top level, or inside a top-level
     * {@code $and} (the driver renders {@code Filters.and} that way); {@code null} if there is none.
     */
    private Object idEquality(Document query) {
        Object id = query.get(getIdField());
        if (isPlainValue(id)) {
            return id;
        }
        if (query.get("$and") instanceof List<?> clauses) {
            for (Object clause : clauses) {
                if (clause instanceof Document d) {
                    Object nested = idEquality(d);
                    if (nested != null) {
                        return nested;
                    }
                }
            }
        }
        return null;
    }

    private Index<Integer> idIndex() {
        for (Index<Integer> index : getIndexes()) {
            List<IndexKey> keys = index.getKeys();
            if (index.isUnique() && keys.size() == 1 && keys.get(0).getKey().equals(getIdField())) {
                return index;
            }
        }
        return null;
    }

    /** An equality value the index can look up directly: not an operator document, a list or a regex. */
    private static boolean isPlainValue(Object value) {
        if (value == null || value instanceof Collection<?> || value instanceof Pattern
                || value instanceof BsonRegularExpression) {
            return false;
        }
        if (value instanceof Document document) {
            for (String key : document.keySet()) {
                if (key.startsWith("$")) {
                    return false;
                }
            }
        }
        return true;
    }
}
