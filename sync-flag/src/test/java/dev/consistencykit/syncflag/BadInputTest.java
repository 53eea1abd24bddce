package dev.consistencykit.syncflag;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Bad specs and bad updates get a typed error before any write, and leave the database as it was. */
@ExtendWith(MongoTestExtension.class)
class BadInputTest {

    @Test
    void shouldRejectATargetCopyingAFieldTheMasterDoesNotDeclare(MongoDatabase db) {
        SyncFlag.Builder builder = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("nickname", "authorNick"));

        assertThatThrownBy(builder::build).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("copies 'nickname', which is not a master field of users");
    }

    @Test
    void shouldRejectSpecsWithoutFieldsOrTargets(MongoDatabase db) {
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users").target(Blog.commentsTarget()).build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("no master fields");
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "name").build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("no targets");
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId")).build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("copies no field");
        assertThatThrownBy(() -> SyncFlag.builder(db).target(Blog.commentsTarget()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no master");
    }

    @Test
    void shouldRejectDollarPrefixedAndMalformedFieldNames(MongoDatabase db) {
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "$where"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("$where");
        assertThatThrownBy(() -> SyncFlag.builder(db).master("$users", "name"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must not start with '$'");
        assertThatThrownBy(() -> SyncTarget.in("comments", "$authorId"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("idField");
        assertThatThrownBy(() -> SyncTarget.in("comments", "authorId").copy("name", "author.$name"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("target field");
        assertThatThrownBy(() -> SyncTarget.in("comments", "authorId").copy("name..first", "authorName"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("master field");
        assertThatThrownBy(() -> SyncTarget.in("posts", "authorId").inArray("$comments"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("arrayField");
        assertThatThrownBy(() -> SyncTarget.in("comments", "authorId").copy("name", "authorId"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("overlaps the id field");
    }

    @Test
    void shouldRejectReservedOverlappingAndDuplicateSpecFields(MongoDatabase db) {
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "syncVersion").target(
                SyncTarget.in("comments", "authorId").copy("syncVersion", "v")).build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "name", "name.first").target(
                SyncTarget.in("comments", "authorId").copy("name", "n")).build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("overlap");
        assertThatThrownBy(() -> SyncFlag.builder(db).master("users", "name", "avatar")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName"))
                .target(SyncTarget.in("comments", "authorId").copy("avatar", "authorAvatar")).build())
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("two targets write the version field");
    }

    @Test
    void shouldRejectAThresholdOfZeroOrLess(MongoDatabase db) {
        assertThatThrownBy(() -> Blog.sync(db).staleAfter(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("staleAfter must be > 0");
        assertThatThrownBy(() -> Blog.sync(db).staleAfter(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Blog.sync(db).build().recover(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Blog.sync(db).rememberedUpdates(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRejectBadMasterIdsAndUpdatesBeforeAnyWrite(MongoDatabase db) {
        Blog.seed(db, 2, 1);
        SyncFlag sync = Blog.sync(db).build();
        DatabaseSnapshot before = DatabaseSnapshot.of(db);
        record Case(Object masterId, org.bson.conversions.Bson update, String message) {
        }
        List<Case> cases = List.of(
                new Case(new Document("$gt", ""), Updates.set("name", "x"), "'$gt' in masterId must not start with '$'"),
                new Case(" ", Updates.set("name", "x"), "masterId must not be blank"),
                new Case(List.of("u0"), Updates.set("name", "x"),
                        "masterId must be a BSON value MongoDB accepts as _id"),
                new Case("u0", new Document("name", "x"), "replacement document"),
                new Case("u0", new Document(), "must not be empty"),
                new Case("u0", Updates.set("syncing.op", "x"), "reserved"),
                new Case("u0", Updates.inc("syncVersion", 1), "reserved"),
                new Case("u0", Updates.set("_id", "u9"), "reserved"),
                new Case("u0", Updates.unset("name"), "removes 'name'"),
                new Case("u0", Updates.rename("name", "fullName"), "removes 'name'"),
                new Case("u0", Updates.set("$name", "x"), "target must be a dotted path of plain field names"));
        for (Case c : cases) {
            assertThatThrownBy(() -> sync.update(c.masterId(), c.update())).as(c.toString())
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining(c.message());
        }
        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRejectAMissingMasterAndAServerRefusedUpdateWithoutWriting(MongoDatabase db) {
        Blog.seed(db, 2, 1);
        SyncFlag sync = Blog.sync(db).build();
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> sync.update("nobody", Updates.set("name", "x")))
                .isInstanceOf(MasterMissingException.class).hasMessageContaining("no master nobody in users");
        assertThatThrownBy(() -> sync.update("u0", Updates.inc("name", 1)))
                .isInstanceOf(UpdateRejectedException.class).hasMessageContaining("refused the update of master u0")
                .hasCauseInstanceOf(com.mongodb.MongoServerException.class);
        assertThatThrownBy(() -> sync.apply(new MasterUpdate(new OperationId(new Document("$ne", 1)), "u0",
                Updates.set("name", "x")))).isInstanceOf(InvalidInputException.class);

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }
}
