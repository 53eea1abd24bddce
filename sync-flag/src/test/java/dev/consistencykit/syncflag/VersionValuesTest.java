package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;

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
        assertThat(problems(db, "master version", 2, true, (sync, value) -> db.getCollection(Blog.USERS)
                .updateOne(eq("_id", "u0"), Updates.set("syncVersion", value)), "Ann", "Anne")).isEmpty();
    }

    @Test
    void shouldUpdateEveryCopyWhateverACopysVersionHolds(MongoDatabase db) {
        assertThat(problems(db, "copy version", 2, false, (sync, value) -> {
            sync.update("u0", Updates.set("name", "Ann"));
            db.getCollection(Blog.COMMENTS).updateOne(eq("_id", "c0-0"), Updates.set("authorIdSyncVersion", value));
        }, "Anne", "Annie")).isEmpty();
    }

    /**
     * A master created again under its id finds its copies' highest version to rise above: a copy whose version is
     * no whole number (a string sorts above every number, an array by its largest element) is not the highest.
     */
    @Test
    void shouldRiseAboveTheCopiesOfAMasterCreatedAgainWhateverOneOfThemHolds(MongoDatabase db) {
        assertThat(problems(db, "copy version", 3, false, (sync, value) -> {
            for (int i = 0; i < 4; i++) {
                sync.update("u0", Updates.set("name", "Ann " + i));   // the copies reach version 4
            }
            db.getCollection(Blog.COMMENTS).updateOne(eq("_id", "c0-0"), Updates.set("authorIdSyncVersion", value));
            Document before = db.getCollection(Blog.USERS).find(eq("_id", "u0")).first();
            db.getCollection(Blog.USERS).deleteOne(eq("_id", "u0"));
            before.remove("syncVersion");
            before.remove("syncOps");
            db.getCollection(Blog.USERS).insertOne(before.append("name", "Annie"));
        }, "Anne")).isEmpty();
    }

    /**
     * For each odd value, on a blog seeded afresh: {@code prepare} puts it in place, then u0 is renamed to each of
     * {@code names}; every copy must follow, or (where {@code mayRefuse}) the rename be refused, typed, with the
     * database as it was.
     */
    private static List<String> problems(MongoDatabase db, String where, int commentsPerUser, boolean mayRefuse,
                                         BiConsumer<SyncFlag, Object> prepare, String... names) {
        List<String> problems = new ArrayList<>();
        for (Object value : ODD) {
            empty(db);
            Blog.seed(db, 2, commentsPerUser);
            SyncFlag sync = Blog.sync(db).build();
            prepare.accept(sync, value);
            DatabaseSnapshot before = DatabaseSnapshot.of(db);
            String what = where + " " + Values.show(value) + ": ";
            try {
                for (String name : names) {
                    sync.update("u0", Updates.set("name", name));
                }
                if (!Blog.invariants(db).isEmpty()) {
                    problems.add(what + Blog.invariants(db));
                }
            } catch (ConsistencyException refused) {
                if (!mayRefuse || !DatabaseSnapshot.of(db).equals(before)) {
                    problems.add(what + "refused (" + refused.getMessage() + ")"
                            + (mayRefuse ? " and the database changed" : ""));
                }
            } catch (RuntimeException e) {
                problems.add(what + e);
            }
        }
        return problems;
    }

    /**
     * Every document of {@code db} deleted, its collections kept: as the test's database was made, sharded where the
     * server shards (dropping them would leave every value after the first to unsharded collections, and drop and
     * create tables on a distributed engine where other tests' databases are being sharded).
     */
    private static void empty(MongoDatabase db) {
        for (String name : db.listCollectionNames()) {
            if (!name.startsWith("system.")) {
                db.getCollection(name).deleteMany(new Document());
            }
        }
    }
}
