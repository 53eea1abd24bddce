package dev.consistencykit.syncflag;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.testkit.InterleavingExplorer;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * The actor table of the sync flag, run at every driver call of a rename: a sweeper, a second owner renaming the same
 * master, a read-repairing reader, and a reader of the copies, which may lag but must never show a name the master
 * never had.
 */
@ExtendWith(MongoTestExtension.class)
class InterleavingTest {

    private static final Set<String> NAMES = Set.of("User 0", "Ann", "Bee");

    @Test
    void shouldKeepEveryCopyEqualToItsMasterWhenAnyActorRunsAtAnyCallOfARename(MongoTarget target) {
        InterleavingExplorer.Report report = InterleavingExplorer.builder(target)
                .name("sync")
                .workload(RenameWorkload.renames(2, 2)
                        .operation((db, random) -> Blog.sync(db).build().update("u0", Updates.set("name", "Ann")))
                        .endingNamed("u0", NAMES))
                .actor("sweeper", db -> {
                    Blog.sync(db).build().recover(Duration.ZERO);
                    return List.of();
                })
                .actor("second owner", db -> {
                    Blog.sync(db).build().update("u0", Updates.set("name", "Bee"));
                    return List.of();
                })
                .actor("read repair", db -> {
                    Document master = db.getCollection(Blog.USERS).find(eq("_id", "u0")).first();
                    Blog.sync(db).build().readRepair(master);
                    return List.of();
                })
                .actor("copy reader", InterleavingTest::copiesHadTheirNames)
                .build().explore();

        assertThat(report.schedules()).isEqualTo(report.calls().size() * 2 * 4);
        assertThat(report.violations()).as(report.toString()).isEmpty();
    }

    /** Every copy of u0's name is one u0 has had. */
    private static List<String> copiesHadTheirNames(MongoDatabase db) {
        List<String> problems = new ArrayList<>();
        for (Document comment : db.getCollection(Blog.COMMENTS).find(eq("authorId", "u0"))) {
            if (!NAMES.contains(comment.getString("authorName"))) {
                problems.add("comment " + comment.get("_id") + " shows " + comment.get("authorName"));
            }
        }
        return problems;
    }
}
