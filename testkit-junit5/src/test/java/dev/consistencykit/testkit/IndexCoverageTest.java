package dev.consistencykit.testkit;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class IndexCoverageTest {

    @Test
    void shouldReportQueriesNoDeclaredIndexServes(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.createIndex(Indexes.ascending("state", "runAt"));
        jobs.insertOne(new Document("_id", 1).append("state", "TODO").append("owner", "w"));
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            jobs.find(and(eq("state", "TODO"), gt("runAt", 0))).first();
            jobs.updateOne(and(eq("_id", 1), eq("owner", "w")), Updates.set("x", 1));
            jobs.find(eq("owner", "w")).first();
            jobs.aggregate(List.of(Aggregates.group("$state"))).first();
            jobs.deleteMany(eq("runAt", 5));

            assertThat(coverage.uncovered(db)).containsExactlyInAnyOrder(
                    "jobs: {\"owner\": \"w\"} (leading index keys: [_id, state])",
                    "jobs: {} (leading index keys: [_id, state])",
                    "jobs: {\"runAt\": 5} (leading index keys: [_id, state])");
        }
    }

    @Test
    void shouldCountAFieldInsideElemMatchAsTheArrayFieldsPath(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> posts = db.getCollection("posts");
        posts.createIndex(Indexes.ascending("comments.authorId"));
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            // the dotted path beside the $elemMatch: what lets the real engine read the index for it
            posts.find(and(eq("comments.authorId", "ann"), com.mongodb.client.model.Filters.elemMatch("comments",
                    and(eq("authorId", "ann"), gt("v", 1))))).first();
            posts.find(com.mongodb.client.model.Filters.elemMatch("comments", eq("text", "hi"))).first();

            assertThat(coverage.uncovered(db)).containsExactly("posts: {\"comments\": {\"$elemMatch\": {\"text\":"
                    + " \"hi\"}}} (leading index keys: [_id, comments.authorId])");
        }
    }

    @Test
    void shouldCoverAnOrOnlyWhenAnIndexServesEachBranch(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.createIndex(Indexes.ascending("state"));
        jobs.createIndex(Indexes.ascending("owner"));
        for (int i = 0; i < 50; i++) {
            jobs.insertOne(new Document("_id", i).append("state", "s" + i).append("owner", "o" + i));
        }
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            jobs.find(com.mongodb.client.model.Filters.or(eq("state", "s1"), eq("owner", "o2"))).first();
            jobs.find(com.mongodb.client.model.Filters.or(eq("state", "s1"), eq("runAt", 5))).first();

            assertThat(coverage.uncovered(db)).containsExactly("jobs: {\"$or\": [{\"state\": \"s1\"}, {\"runAt\":"
                    + " 5}]} (leading index keys: [_id, state, owner])");
        }
    }

    @Test
    void shouldCoverAQueryWhoseSortLeadsAnIndexOnlyWhenItIsSentWithThatSort(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.createIndex(Indexes.compoundIndex(Indexes.descending("priority"), Indexes.ascending("claimAt")));
        for (int i = 0; i < 50; i++) {
            jobs.insertOne(new Document("_id", i).append("priority", i % 3).append("claimAt", i));
        }
        try (IndexCoverage coverage = IndexCoverage.attach(target, db.getName())) {
            jobs.find(com.mongodb.client.model.Filters.lte("claimAt", 5)).sort(new Document("priority", -1)
                    .append("claimAt", 1)).first();
            jobs.findOneAndUpdate(com.mongodb.client.model.Filters.lte("claimAt", 7), new Document("$set",
                    new Document("x", 1)), new com.mongodb.client.model.FindOneAndUpdateOptions()
                    .sort(new Document("priority", -1).append("claimAt", 1)));
            jobs.find(com.mongodb.client.model.Filters.lte("claimAt", 6)).sort(new Document("claimAt", 1)).first();

            assertThat(coverage.uncovered(db)).containsExactly("jobs: {\"claimAt\": {\"$lte\": 6}} (leading index"
                    + " keys: [_id, priority])");
        }
    }

    @Test
    void shouldIgnoreOtherDatabasesAndStopWhenClosed(MongoTarget target, MongoDatabase db) {
        IndexCoverage coverage = IndexCoverage.attach(target, db.getName());
        MongoDatabase other = target.client().getDatabase(MongoTestExtension.freshName("other"));
        try {
            other.getCollection("c").find(eq("x", 1)).first();
            coverage.close();
            db.getCollection("c").find(eq("x", 1)).first();

            assertThat(coverage.captured()).isEmpty();
        } finally {
            other.drop();
        }
    }
}
