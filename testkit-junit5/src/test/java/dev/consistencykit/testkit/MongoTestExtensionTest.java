package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MongoTestExtensionTest {

    private static final List<String> NAMES = new ArrayList<>();

    @Test
    @Order(1)
    void shouldGiveEmptyDatabaseWhenTestStarts(MongoDatabase db) {
        assertThat(db.listCollectionNames().into(new ArrayList<>())).isEmpty();
        db.getCollection("c").insertOne(new Document("_id", 1));
        NAMES.add(db.getName());
    }

    @Test
    @Order(2)
    void shouldGiveAnotherDatabaseAndHaveDroppedThePreviousOne(MongoDatabase db, MongoClient client) {
        assertThat(db.getName()).isNotIn(NAMES);
        assertThat(client.listDatabaseNames().into(new ArrayList<>())).doesNotContainAnyElementsOf(NAMES);
        NAMES.add(db.getName());
    }

    @Test
    @Order(3)
    void shouldGiveSameDatabaseToEveryParameterOfOneTest(MongoDatabase first, MongoDatabase second) {
        assertThat(first.getName()).isEqualTo(second.getName());
    }

    @AfterAll
    static void namesAreValid() {
        assertThat(NAMES).allSatisfy(n -> assertThat(n).startsWith("ck_").hasSizeLessThan(64));
    }
}
