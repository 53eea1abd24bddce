package dev.consistencykit.embedded.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.aggregation.Expression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * An aggregation whose first stage is a {@code $match}, and whose {@code $lookup}s with a pipeline each start with a
 * {@code $match} of constants, run through the collections' query path: the stock server feeds every aggregation and
 * every {@code $lookup} sub-pipeline a scan of the whole collection (docs/embedded-server.md, aggregations use no
 * index), so a lookup of one root's documents read every document of the collection. Here the leading {@code $match}
 * is a query, served by the indexes as a {@code find} is (and copied under the collection's lock, as a find's results
 * are), and the other stages are the stock server's own, applied in order, one document at a time — as mongod runs a
 * pipeline: the sub-pipeline of a {@code $lookup} runs, whole, when the document reaches that stage.
 */
final class IndexedAggregation {

    private IndexedAggregation() {
    }

    /** Whether {@code command} has that shape (and writes nothing: no {@code $out}, no {@code $merge}). */
    static boolean applies(Document command) {
        if (!(command.get("aggregate") instanceof String) || !(command.get("pipeline") instanceof List<?> stages)
                || stages.isEmpty() || !isMatch(stages.get(0))) {
            return false;
        }
        for (Object stage : stages) {
            if (!(stage instanceof Document d) || d.size() != 1 || d.containsKey("$out") || d.containsKey("$merge")
                    || d.containsKey("$changeStream")) {
                return false;
            }
            if (d.get("$lookup") instanceof Document lookup && lookup.containsKey("pipeline")
                    && !(lookup.get("pipeline") instanceof List<?> sub && !sub.isEmpty() && isMatch(sub.get(0))
                    && !mentionsVariables(((Document) sub.get(0)).get("$match")))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isMatch(Object stage) {
        return stage instanceof Document d && d.size() == 1 && d.get("$match") instanceof Document;
    }

    private static boolean mentionsVariables(Object value) {
        if (value instanceof String s) {
            return s.startsWith("$$");
        }
        if (value instanceof Document d) {
            for (Map.Entry<String, Object> e : d.entrySet()) {
                if (e.getKey().equals("$expr") || mentionsVariables(e.getValue())) {
                    return true;
                }
            }
            return false;
        }
        if (value instanceof List<?> list) {
            return list.stream().anyMatch(IndexedAggregation::mentionsVariables);
        }
        return false;
    }

    /** Runs it; the whole result in the first batch (a cursor already exhausted). */
    static Document run(MongoDatabase database, Document command, DatabaseResolver resolver, Oplog oplog) {
        String collectionName = (String) command.get("aggregate");
        List<?> stages = (List<?>) command.get("pipeline");
        MongoCollection<?> collection = database.resolveCollection(collectionName, false);
        List<Document> results;
        if (collection == null) {
            results = List.of();
        } else {
            Stream<Document> documents = collection.handleQueryAsStream(
                    (Document) ((Document) stages.get(0)).get("$match"));
            for (Object stage : stages.subList(1, stages.size())) {
                documents = apply(database, collection, (Document) stage, documents, resolver, oplog);
            }
            results = documents.collect(Collectors.toList());
        }
        Document cursor = new Document("id", 0L);
        cursor.put("ns", database.getDatabaseName() + "." + collectionName);
        cursor.put("firstBatch", results);
        Document reply = new Document("cursor", cursor);
        reply.put("ok", 1.0);
        return reply;
    }

    private static Stream<Document> apply(MongoDatabase database, MongoCollection<?> collection, Document stage,
                                          Stream<Document> documents, DatabaseResolver resolver, Oplog oplog) {
        if (stage.get("$lookup") instanceof Document lookup && lookup.get("pipeline") instanceof List<?> sub) {
            MongoCollection<?> foreign = database.resolveCollection((String) lookup.get("from"), false);
            Document let = lookup.get("let") instanceof Document d ? d : new Document();
            String as = (String) lookup.get("as");
            Document first = (Document) ((Document) sub.get(0)).get("$match");
            List<Document> rest = new ArrayList<>();
            for (Object s : sub.subList(1, sub.size())) {
                rest.add((Document) s);
            }
            return documents.map(document -> {
                List<Document> joined = List.of();
                if (foreign != null) {
                    Aggregation aggregation = Aggregation.fromPipeline(rest, resolver, database, foreign, oplog);
                    Map<String, Object> variables = new HashMap<>();
                    let.forEach((name, expression) -> variables.put("$" + name,
                            Expression.evaluateDocument(expression, document)));
                    aggregation.setVariables(variables);
                    joined = aggregation.runStages(foreign.handleQueryAsStream(first));
                }
                Document out = document.clone();
                out.put(as, joined);
                return out;
            });
        }
        return Aggregation.fromPipeline(List.of(stage), resolver, database, collection, oplog)
                .runStagesAsStream(documents);
    }
}
