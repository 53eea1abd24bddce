package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

/**
 * A scratch database comes back empty with its collections and indexes, and serves a bounded number of scenarios: on
 * the real engine, indexes refilled without bound came to omit stored documents from their scans (docs/servers.md).
 */
class ScratchDatabasesTest {

    @Test
    void shouldHandBackAnEmptiedDatabaseAndDropItAfterItsLastScenario() {
        MongoClient client = MongoTarget.fromEnvironment().client();
        List<String> names = new ArrayList<>();
        try (ScratchDatabases pool = new ScratchDatabases(client, "scratch")) {
            for (int scenario = 0; scenario <= ScratchDatabases.MAX_USES; scenario++) {
                MongoDatabase db = pool.take();
                assertThat(db.getCollection("records").countDocuments()).as("scenario %d starts empty", scenario)
                        .isZero();
                db.getCollection("records").insertOne(new Document("scenario", scenario));
                names.add(db.getName());
                pool.give(db);
            }
            String first = names.get(0);
            assertThat(names.subList(0, ScratchDatabases.MAX_USES)).as("one database for the first scenarios")
                    .containsOnly(first);
            assertThat(names.get(ScratchDatabases.MAX_USES)).as("a new one once it served its last").isNotEqualTo(first);
            assertThat(client.listDatabaseNames().into(new ArrayList<>())).as("the used-up one is dropped")
                    .doesNotContain(first);
        }
        assertThat(client.listDatabaseNames().into(new ArrayList<>())).doesNotContainAnyElementsOf(names);
    }

    private final List<String> scenarios = new ArrayList<>();

    @Test
    void shouldGiveEachScenarioAnEmptyDatabaseAndDropThemAllAtTheEnd() {
        MongoClient client = MongoTarget.fromEnvironment().client();
        for (int i = 0; i < 2; i++) {
            try (ScratchDatabases pool = new ScratchDatabases(client, "ledger")) {
                MongoDatabase db = pool.take();
                runScenario(db);
                pool.give(db);        // a scenario that did not end normally drops its database instead
            }
        }
        assertThat(scenarios).hasSize(2).doesNotHaveDuplicates();
        assertThat(client.listDatabaseNames().into(new ArrayList<>())).doesNotContainAnyElementsOf(scenarios);
    }

    private void runScenario(MongoDatabase db) {
        assertThat(db.getCollection("records").countDocuments()).isZero();
        db.getCollection("records").insertOne(new Document("_id", db.getName()));
        scenarios.add(db.getName());
    }
}
