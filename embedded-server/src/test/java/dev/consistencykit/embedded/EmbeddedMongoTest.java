package dev.consistencykit.embedded;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;

class EmbeddedMongoTest {
    @Test
    void shouldMatchWholeFilterWhenQueryNarrowedByIdIndex() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("narrow").getCollection("tx");
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                docs.add(new Document("_id", i).append("state", i % 2 == 0 ? "pending" : "done")
                        .append("markers", List.of("m" + i)));
            }
            c.insertMany(docs);
            c.insertOne(new Document("_id", new Document("k", 1)).append("state", "pending"));

            assertThat(c.updateOne(and(eq("_id", 4), eq("state", "pending")), Updates.set("state", "x"))
                    .getModifiedCount()).isEqualTo(1);
            assertThat(c.updateOne(and(eq("_id", 5), eq("state", "pending")), Updates.set("state", "x"))
                    .getModifiedCount()).isZero();
            assertThat(c.updateOne(and(eq("_id", 6), eq("markers", "m6")), Updates.set("state", "y"))
                    .getModifiedCount()).isEqualTo(1);
            assertThat(c.updateOne(and(eq("_id", 8), eq("markers", "m6")), Updates.set("state", "y"))
                    .getModifiedCount()).isZero();
            assertThat(c.find(and(eq("_id", new Document("k", 1)), eq("state", "pending"))).first()).isNotNull();
            assertThat(c.countDocuments(and(in("_id", List.of(1, 2, 3)), eq("state", "done")))).isEqualTo(2);
            assertThat(c.countDocuments(and(eq("_id", 999), eq("state", "done")))).isZero();
            assertThat(c.countDocuments(eq("state", "x"))).isEqualTo(1);
        }
    }

    /**
     * The same queries, updates and deletes on a collection with non-unique, sparse, compound and multikey indexes
     * (served by the embedded server's equality index) and on one without: the results never differ.
     */
    @Test
    void shouldReturnWhatAFullScanReturnsWhenQueriesUseSecondaryIndexes() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            MongoCollection<Document> indexed = client.getDatabase("secondary").getCollection("indexed");
            MongoCollection<Document> plain = client.getDatabase("secondary").getCollection("plain");
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("state", "runAt"));
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("owner"));
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("comments.authorId"));
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("tags"));
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("runAt", "owner"),
                    new com.mongodb.client.model.IndexOptions().unique(true));
            indexed.createIndex(com.mongodb.client.model.Indexes.ascending("flag.at"),
                    new com.mongodb.client.model.IndexOptions().sparse(true));
            indexed.createIndex(com.mongodb.client.model.Indexes.compoundIndex(
                    com.mongodb.client.model.Indexes.descending("owner"), com.mongodb.client.model.Indexes.ascending(
                    "at")));
            for (int i = 0; i < 60; i++) {
                Document d = new Document("_id", i).append("state", List.of("TODO", "DONE", "DEAD").get(i % 3))
                        .append("runAt", i).append("owner", i % 4 == 0 ? (Object) 1 : (i % 4 == 1 ? 1L : 2.0))
                        .append("tags", List.of("t" + (i % 5), "t" + (i % 7)))
                        .append("comments", List.of(new Document("authorId", "a" + (i % 6)).append("v", i),
                                new Document("authorId", "a" + (i % 4)).append("v", -i)));
                if (i % 2 == 0) {
                    d.append("flag", new Document("at", i));
                }
                if (i % 3 != 0) {
                    d.append("at", i % 3 == 1 ? new java.util.Date(i * 1_000L) : null);
                }
                indexed.insertOne(d);
                plain.insertOne(d);
            }
            List<org.bson.conversions.Bson> queries = List.of(eq("state", "TODO"),
                    and(eq("state", "TODO"), com.mongodb.client.model.Filters.lte("runAt", 30)),
                    eq("owner", 1), eq("owner", 1.0), eq("owner", 2), eq("tags", "t3"), eq("comments.authorId", "a2"),
                    com.mongodb.client.model.Filters.elemMatch("comments", and(eq("authorId", "a1"),
                            com.mongodb.client.model.Filters.gt("v", 10))),
                    eq("flag.at", 4), eq("flag.at", null), com.mongodb.client.model.Filters.exists("flag.at"),
                    eq("runAt", 12), and(eq("runAt", 12), eq("owner", 1)), and(eq("runAt", 13), eq("owner", 1)),
                    eq("state", "NONE"), in("state", "TODO", "DEAD"), and(in("owner", 1, 7), eq("state", "DONE")),
                    in("tags", "t1", "t6"), in("state", List.of()),
                    // ranges, served by the documents holding the key: a leading key, a later one, a multikey one, a
                    // sparse one, numbers of several types, and a range beside an equality another index serves
                    com.mongodb.client.model.Filters.lte("runAt", 30), com.mongodb.client.model.Filters.lt("owner", 2),
                    and(com.mongodb.client.model.Filters.gte("runAt", 10), com.mongodb.client.model.Filters.lt("runAt",
                            20.5)), com.mongodb.client.model.Filters.gt("tags", "t4"),
                    com.mongodb.client.model.Filters.gt("flag.at", 10), com.mongodb.client.model.Filters.lte("at",
                            new java.util.Date(20_000)), and(eq("tags", "t2"), com.mongodb.client.model.Filters.gt(
                            "runAt", 5L)));
            Runnable compare = () -> {
                for (org.bson.conversions.Bson q : queries) {
                    assertThat(ids(indexed.find(q))).as(q.toString()).isEqualTo(ids(plain.find(q)));
                    // the first in an order (a claim), ties included: the same document as a full sort's first
                    org.bson.conversions.Bson order = com.mongodb.client.model.Sorts.orderBy(
                            com.mongodb.client.model.Sorts.descending("state"),
                            com.mongodb.client.model.Sorts.ascending("owner"));
                    Document first = indexed.find(q).sort(order).limit(1).first();
                    List<Document> sorted = plain.find(q).sort(order).into(new ArrayList<>());
                    Document expected = sorted.isEmpty() ? null : sorted.get(0);
                    assertThat(first == null ? null : first.get("_id")).as("first of " + q)
                            .isEqualTo(expected == null ? null : expected.get("_id"));
                }
            };
            compare.run();
            for (MongoCollection<Document> c : List.of(indexed, plain)) {
                c.updateMany(eq("state", "TODO"), Updates.set("state", "DONE"));
                c.updateOne(eq("_id", 7), Updates.combine(Updates.set("tags", List.of("t3")),
                        Updates.unset("comments"), Updates.set("flag.at", 4)));
                c.updateMany(eq("comments.authorId", "a2"), Updates.set("comments.$[].authorId", "a9"));
                c.deleteMany(eq("owner", 2L));
                c.updateOne(eq("_id", 8), Updates.unset("flag"));
                c.updateMany(com.mongodb.client.model.Filters.lt("at", new java.util.Date(10_000)),
                        Updates.unset("at"));
                c.updateOne(eq("_id", 9), Updates.set("at", new java.util.Date(1_000)));
            }
            compare.run();
            assertThat(ids(indexed.find(eq("state", "DONE")))).hasSize(ids(plain.find(eq("state", "DONE"))).size());
        }
    }

    /**
     * An aggregation led by a {@code $match}, with {@code $lookup}s whose sub-pipelines start with a {@code $match} of
     * constants (one with {@code let} and {@code $expr} after it), an {@code $unwind} and a {@code $project}: served
     * from the indexes by the embedded server, it answers what the stock server's full scans answer (the same
     * pipeline behind a leading {@code $sort}, which the indexed path leaves to the stock one).
     */
    @Test
    void shouldAnswerWhatTheStockAggregationAnswersWhenALeadingMatchUsesAnIndex() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            MongoCollection<Document> roots = client.getDatabase("agg").getCollection("roots");
            MongoCollection<Document> items = client.getDatabase("agg").getCollection("items");
            items.createIndex(com.mongodb.client.model.Indexes.ascending("root", "version"));
            for (int r = 0; r < 20; r++) {
                roots.insertOne(new Document("_id", "r" + r).append("version", (long) (r % 4)).append("floor", 0L));
                for (int v = 0; v < 5; v++) {
                    items.insertOne(new Document("_id", "r" + r + "-" + v).append("root", "r" + r)
                            .append("version", (long) v).append("until", v % 2 == 0 ? Long.MAX_VALUE : (long) v + 1));
                }
            }
            for (Object rootId : List.of("r3", "r7", "missing")) {
                List<Document> pipeline = List.of(new Document("$match", new Document("_id", rootId)),
                        new Document("$lookup", new Document("from", "items").append("let", new Document("v",
                                "$version")).append("pipeline", List.of(
                                        new Document("$match", new Document("root", rootId)),
                                        new Document("$match", new Document("$expr", new Document("$and", List.of(
                                                new Document("$lte", List.of("$version", "$$v")),
                                                new Document("$gt", List.of("$until", "$$v"))))))))
                                .append("as", "items")),
                        new Document("$unwind", new Document("path", "$items")
                                .append("preserveNullAndEmptyArrays", true).append("includeArrayIndex", "i")),
                        new Document("$lookup", new Document("from", "roots").append("pipeline", List.of(
                                new Document("$match", new Document("_id", rootId)),
                                new Document("$project", new Document("_id", 0).append("floor", 1))))
                                .append("as", "again")),
                        new Document("$project", new Document("items", 1).append("again", 1).append("version",
                                new Document("$cond", java.util.Arrays.asList(
                                        new Document("$gt", List.of("$i", 0)), null, "$version")))));
                List<Document> indexed = roots.aggregate(pipeline).into(new ArrayList<>());
                List<Document> stock = new ArrayList<>(List.of(new Document("$sort", new Document("_id", 1))));
                stock.addAll(pipeline);
                assertThat(indexed).as("pipeline on " + rootId).isEqualTo(roots.aggregate(stock)
                        .into(new ArrayList<>()));
                if (!rootId.equals("missing")) {
                    assertThat(indexed).isNotEmpty();
                }
            }
        }
    }

    private static List<Object> ids(com.mongodb.client.FindIterable<Document> found) {
        List<Object> ids = new ArrayList<>();
        found.forEach(d -> ids.add(d.get("_id")));
        ids.sort(java.util.Comparator.comparing(Object::toString));
        return ids;
    }

    @Test
    void shouldListenOnLoopbackWhenStarted() {
        try (EmbeddedMongo server = EmbeddedMongo.start()) {
            assertThat(server.connectionString()).isEqualTo("mongodb://127.0.0.1:" + server.port());
            assertThat(server.port()).isPositive();
        }
    }

    @Test
    void shouldAnswerHelloAsHealthChecksSendIt() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            org.bson.Document hello = client.getDatabase("admin").runCommand(new org.bson.Document("hello", 1));

            assertThat(hello.get("isWritablePrimary")).isEqualTo(Boolean.TRUE);
            assertThat(hello.get("ok")).isIn(1, 1.0);
        }
    }

    @Test
    void shouldDropOnlyTheNamedCollectionsIndexesWhenAllAreDropped() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            com.mongodb.client.MongoDatabase db = client.getDatabase("t");
            db.getCollection("jobs").createIndex(new org.bson.Document("state", 1));
            db.getCollection("jobs").createIndex(new org.bson.Document("owner", 1).append("at", 1));
            db.getCollection("servers").createIndex(new org.bson.Document("name", 1).append("owner", 1));

            db.getCollection("jobs").dropIndexes();   // index "*"

            assertThat(db.getCollection("jobs").listIndexes().map(i -> i.getString("name"))
                    .into(new java.util.ArrayList<>())).containsExactly("_id_");
            assertThat(db.getCollection("servers").listIndexes().map(i -> i.getString("name"))
                    .into(new java.util.ArrayList<>())).containsExactlyInAnyOrder("_id_", "name_1_owner_1");
        }
    }

    @Test
    void shouldAnswerGetnonceAsLegacyDriversSendItFirst() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            org.bson.Document first = client.getDatabase("admin").runCommand(new org.bson.Document("getnonce", 1));
            org.bson.Document second = client.getDatabase("admin").runCommand(new org.bson.Document("getnonce", 1));

            assertThat(first.getString("nonce")).hasSize(16).isNotEqualTo(second.getString("nonce"));
            assertThat(first.get("ok")).isIn(1, 1.0);
        }
    }

    @Test
    void shouldMatchWholeFilterWhenQueryNarrowedByAnIdInList() {
        try (EmbeddedMongo server = EmbeddedMongo.start(); MongoClient client = MongoClients.create(
                server.connectionString())) {
            com.mongodb.client.MongoCollection<org.bson.Document> c = client.getDatabase("t").getCollection("c");
            for (int i = 0; i < 50; i++) {
                c.insertOne(new org.bson.Document("_id", i).append("k", i % 2 == 0 ? "even" : "odd"));
            }
            org.bson.conversions.Bson filter = com.mongodb.client.model.Filters.and(
                    com.mongodb.client.model.Filters.in("_id", 1, 2, 3, 4, 99, 2L),
                    com.mongodb.client.model.Filters.eq("k", "even"));

            assertThat(c.find(filter).map(d -> d.get("_id")).into(new java.util.ArrayList<>()))
                    .containsExactlyInAnyOrder(2, 4);
            assertThat(c.updateMany(filter, com.mongodb.client.model.Updates.set("x", 1)).getModifiedCount())
                    .isEqualTo(2);
            assertThat(c.countDocuments(com.mongodb.client.model.Filters.eq("x", 1))).isEqualTo(2);
        }
    }
}
