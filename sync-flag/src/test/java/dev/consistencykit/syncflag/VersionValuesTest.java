package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The versions the sync flag keeps live in documents users write, masters and copies alike: whatever a master's or a
 * copy's version field holds, an update either reaches every copy (the master's version then a plain number) or is
 * refused, typed, with nothing written. A guard that compared with an array would match one element and leave a copy
 * stale for good; NaN compares differently on different servers.
 */
@ExtendWith(MongoTestExtension.class)
class VersionValuesTest {

    private static final List<Object> ODD = Arrays.asList(List.of(1L, 100L), List.of(), Double.NaN, Decimal128.NaN,
            Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, "7", null, new Document("v", 1), true, 3.5,
            Decimal128.parse("2.5"), -4L, 1e300);

    @Test
    void shouldUpdateEveryCopyOrRefuseWithNothingWrittenWhateverTheMasterVersionHolds(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Object value : ODD) {
            db.drop();
            Blog.seed(db, 2, 2);
            db.getCollection(Blog.USERS).updateOne(eq("_id", "u0"), Updates.set("syncVersion", value));
            SyncFlag sync = Blog.sync(db).build();
            DatabaseSnapshot before = DatabaseSnapshot.of(db);
            try {
                sync.update("u0", Updates.set("name", "Ann"));
                sync.update("u0", Updates.set("name", "Anne"));
                if (!Blog.invariants(db).isEmpty()) {
                    problems.add("master version " + Values.show(value) + ": " + Blog.invariants(db));
                }
            } catch (ConsistencyException refused) {
                if (!DatabaseSnapshot.of(db).equals(before)) {
                    problems.add("master version " + Values.show(value) + ": refused (" + refused.getMessage()
                            + ") and the database changed");
                }
            } catch (RuntimeException e) {
                problems.add("master version " + Values.show(value) + ": " + e);
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void shouldUpdateEveryCopyWhateverACopysVersionHolds(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Object value : ODD) {
            db.drop();
            Blog.seed(db, 2, 2);
            SyncFlag sync = Blog.sync(db).build();
            sync.update("u0", Updates.set("name", "Ann"));
            db.getCollection(Blog.COMMENTS).updateOne(eq("_id", "c0-0"), Updates.set("authorIdSyncVersion", value));
            try {
                sync.update("u0", Updates.set("name", "Anne"));
                sync.update("u0", Updates.set("name", "Annie"));
                if (!Blog.invariants(db).isEmpty()) {
                    problems.add("copy version " + Values.show(value) + ": " + Blog.invariants(db));
                }
            } catch (RuntimeException e) {
                problems.add("copy version " + Values.show(value) + ": " + e);
            }
        }
        assertThat(problems).isEmpty();
    }

    /**
     * A master created again under its id finds its copies' highest version to rise above: a copy whose version is
     * no whole number (a string sorts above every number, an array by its largest element) is not the highest.
     */
    @Test
    void shouldRiseAboveTheCopiesOfAMasterCreatedAgainWhateverOneOfThemHolds(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Object value : ODD) {
            db.drop();
            Blog.seed(db, 2, 3);
            SyncFlag sync = Blog.sync(db).build();
            for (int i = 0; i < 4; i++) {
                sync.update("u0", Updates.set("name", "Ann " + i));   // the copies reach version 4
            }
            db.getCollection(Blog.COMMENTS).updateOne(eq("_id", "c0-0"), Updates.set("authorIdSyncVersion", value));
            Document before = db.getCollection(Blog.USERS).find(eq("_id", "u0")).first();
            db.getCollection(Blog.USERS).deleteOne(eq("_id", "u0"));
            before.remove("syncVersion");
            before.remove("syncOps");
            db.getCollection(Blog.USERS).insertOne(before.append("name", "Annie"));
            try {
                sync.update("u0", Updates.set("name", "Anne"));
                if (!Blog.invariants(db).isEmpty()) {
                    problems.add("copy version " + Values.show(value) + ": " + Blog.invariants(db));
                }
            } catch (RuntimeException e) {
                problems.add("copy version " + Values.show(value) + ": " + e);
            }
        }
        assertThat(problems).isEmpty();
    }
}
