package dev.consistencykit.testkit;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class QueryPlansTest {

    @Test
    void shouldRecordEachShapeOnceWithItsValuesLeftOut(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.insertOne(new Document("_id", 1).append("state", "todo").append("runAt", 5));
        List<QueryPlans.Plan> plans;
        try (QueryPlans recorder = QueryPlans.attach(target.commandListeners())) {
            for (int i = 0; i < 3; i++) {
                jobs.find(and(eq("state", "todo"), gt("runAt", i))).sort(Sorts.ascending("runAt")).first();
                jobs.updateOne(and(eq("_id", i), eq("pending.c" + "0123456789abcdef" + i, true)), Updates.set("x", i));
                jobs.updateOne(eq("_id", i), Updates.inc(QueryPlans.RAW_FIELD, 1L));   // a baseline: timed apart
            }
            plans = recorder.explain(target.client());
        }
        assertThat(plans).extracting(QueryPlans.Plan::shape).containsExactly(
                "find {$and: [{state: string}, {runAt: {$gt: int32}}]} sort {\"runAt\": 1} limit 1",
                "update {$and: [{_id: int32}, {pending.<id>: boolean}]} limit 1",
                QueryPlans.RAW_BASELINE_SHAPE);
        assertThat(plans).extracting(QueryPlans.Plan::sent).containsExactly(3L, 3L, 3L);
        assertThat(plans).allSatisfy(plan -> assertThat(plan.sentMs()).isPositive());
        assertThat(plans.get(0).returned()).isEqualTo(1);
        assertThat(plans.get(0).documents()).isEqualTo(1);
        assertThat(plans.get(2).plan()).contains("raw baseline");
    }

    @Test
    void shouldMarkAPlanThatReadsTheWholeCollection(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> posts = db.getCollection("posts");
        posts.createIndex(Indexes.ascending("comments.authorId", "comments.v"));
        for (int i = 0; i < 200; i++) {
            posts.insertOne(new Document("_id", i).append("tag", "t" + i).append("comments",
                    List.of(new Document("authorId", "u" + i % 20).append("v", i))));
        }
        Document unindexed = new Document("find", "posts").append("filter", new Document("tag", "t7"));
        Document indexed = new Document("find", "posts").append("filter", Document.parse(and(
                eq("comments.authorId", "u7"), gt("comments.v", 100), elemMatch("comments", and(eq("authorId",
                        "u7"), gt("v", 100)))).toBsonDocument().toJson()));
        // the embedded server explains nothing; every server that does reads the whole collection for the first
        // (PostgreSQL's planner may take a sequential scan by cost, which the mark leaves to its node's name)
        QueryPlans.planOf(db, unindexed).ifPresent(plan -> assertThat(QueryPlans.readsWholeCollection(plan)
                || plan.contains("Seq Scan")).as(plan).isTrue());
        QueryPlans.planOf(db, indexed).ifPresent(plan -> assertThat(QueryPlans.readsWholeCollection(plan))
                .as(plan).isFalse());
    }

    @Test
    void shouldPlanAQueryOnAnIndexedFieldThroughItsIndex(MongoTarget target, MongoDatabase db) {
        MongoCollection<Document> jobs = db.getCollection("jobs");
        jobs.createIndex(Indexes.ascending("state"));
        for (int i = 0; i < 50; i++) {
            jobs.insertOne(new Document("_id", i).append("state", i == 7 ? "todo" : "done"));
        }
        // javadoc:start testkit/src/main/java/dev/consistencykit/testkit/QueryPlans.java
        List<QueryPlans.Plan> plans;
        try (QueryPlans recorder = QueryPlans.attach(target.commandListeners())) {
            jobs.find(eq("state", "todo")).first();
            plans = recorder.explain(target.client());
        }
        assertThat(plans).noneMatch(QueryPlans.Plan::wholeCollection);
        // javadoc:end
        assertThat(plans).singleElement().satisfies(plan -> assertThat(plan.returned()).isEqualTo(1));
    }
}
