package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.ThrowingConsumer;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Every bad change set is refused with a typed error before anything is written. */
@ExtendWith(MongoTestExtension.class)
class BadInputTest {

    private static final String ROOT = Catalogue.ROOT;

    /** Seeds versions 1 and 2 (once per database), then checks that {@code attempt} throws and changes nothing. */
    private static void refusedUnchanged(MongoDatabase db, Class<? extends Throwable> type, String message,
                                         ThrowingConsumer<VersionedStore> attempt) {
        VersionedStore store = Catalogue.store(db).build();
        if (db.getCollection(VersionedStoreConfig.DEFAULT_ROOTS_COLLECTION).countDocuments() == 0) {
            Catalogue.seed(db, Catalogue.products(2));
            store.commit(ChangeSet.on(ROOT, 1).put("i0", Catalogue.product("two", 2)).build());
        }
        DatabaseSnapshot before = DatabaseSnapshot.of(db);

        assertThatThrownBy(() -> attempt.accept(store)).isInstanceOf(type).hasMessageContaining(message);

        assertThat(DatabaseSnapshot.of(db)).isEqualTo(before);
    }

    @Test
    void shouldRefuseAStaleBaseVersionWithAConflict(MongoDatabase db) {
        refusedUnchanged(db, VersionConflictException.class, "based on version 1 but the root is at version 2",
                s -> s.commit(ChangeSet.on(ROOT, 1).put("i1", Catalogue.product("late", 1)).build()));
    }

    @Test
    void shouldRefuseAStaleBaseVersionFromApplyAndSubmitToo(MongoDatabase db) {
        refusedUnchanged(db, VersionConflictException.class, "version 2",
                s -> s.apply(ChangeSet.on(ROOT, 1).put("i1", Catalogue.product("late", 1)).build()));
        assertThatThrownBy(() -> Catalogue.store(db).build()
                .submit(ChangeSet.on(ROOT, 0).put("i1", Catalogue.product("late", 1)).build()))
                .isInstanceOf(VersionConflictException.class);
    }

    @Test
    void shouldRefuseAFutureBaseVersion(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "baseVersion 7 is ahead of root catalogue's committed"
                + " version 2", s -> s.commit(ChangeSet.on(ROOT, 7).put("i1", Catalogue.product("x", 1)).build()));
    }

    @Test
    void shouldRefuseANegativeBaseVersion(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "baseVersion must be >= 0",
                s -> s.commit(ChangeSet.on(ROOT, -1).put("i1", Catalogue.product("x", 1)).build()));
    }

    @Test
    void shouldRefuseAMissingRoot(MongoDatabase db) {
        refusedUnchanged(db, UnknownRootException.class, "no such root (id=nowhere)",
                s -> s.commit(ChangeSet.on("nowhere", 0).put("i1", Catalogue.product("x", 1)).build()));
        assertThatThrownBy(() -> Catalogue.store(db).build().read("nowhere")).isInstanceOf(UnknownRootException.class);
    }

    @Test
    void shouldRefuseBadRootAndItemIds(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "rootId must not be blank",
                s -> s.commit(ChangeSet.on(" ", 0).put("i1", Catalogue.product("x", 1)).build()));
        refusedUnchanged(db, InvalidInputException.class, "'$gt' in rootId must not start with '$'",
                s -> s.commit(ChangeSet.on(new Document("$gt", ""), 2).put("i1", Catalogue.product("x", 1)).build()));
        refusedUnchanged(db, InvalidInputException.class, "'$ne' in itemId must not start with '$'",
                s -> s.commit(ChangeSet.on(ROOT, 2).put(Map.of("$ne", 1), Catalogue.product("x", 1)).build()));
        refusedUnchanged(db, InvalidInputException.class, "itemId must not be null",
                s -> s.commit(ChangeSet.on(ROOT, 2).put(null, Catalogue.product("x", 1)).build()));
        refusedUnchanged(db, InvalidInputException.class, "itemId must not be blank",
                s -> s.get(ROOT, ""));
    }

    @Test
    void shouldRefuseDollarPrefixedAndDottedFields(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "'$set'",
                s -> s.commit(ChangeSet.on(ROOT, 2).put("i1", new Document("$set", new Document("price", 1))).build()));
        refusedUnchanged(db, InvalidInputException.class, "'$where'",
                s -> s.commit(ChangeSet.on(ROOT, 2).put("i1", new Document("tags", List.of(
                        new Document("$where", "1")))).build()));
        refusedUnchanged(db, InvalidInputException.class, "'a.b'",
                s -> s.commit(ChangeSet.on(ROOT, 2).put("i1", Catalogue.product("x", 1))
                        .meta(new Document("a.b", 1)).build()));
    }

    @Test
    void shouldRefuseAnEmptyChangeSet(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "must put or delete at least one item",
                s -> s.commit(ChangeSet.on(ROOT, 2).build()));
        refusedUnchanged(db, InvalidInputException.class, "must put or delete at least one item",
                s -> s.update(ROOT, (tree, change) -> { }));
    }

    @Test
    void shouldRefuseAnItemOverTheServersDocumentSizeLimit(MongoDatabase db) {
        String big = "x".repeat(16 * 1024 * 1024 - 100);
        refusedUnchanged(db, InvalidInputException.class, "stays under MongoDB's 16777216-byte limit",
                s -> s.commit(ChangeSet.on(ROOT, 2).put("i0", Catalogue.product("small", 1))
                        .put("i1", new Document("blob", big)).build()));
    }

    @Test
    void shouldRefuseAReusedChangeSetIdWithOtherContentWhileItIsStagedOrUnsettled(MongoDatabase db) {
        refusedUnchanged(db, dev.consistencykit.core.IdempotencyConflictException.class, "already used",
                s -> s.commit(ChangeSet.on(ROOT, 2).id(OperationId.of("seed")).put("i0", Catalogue.product("x", 1))
                        .build()));
        Catalogue.store(db).build().submit(ChangeSet.on(ROOT, 2).id(OperationId.of("staged"))
                .put("i0", Catalogue.product("x", 1)).build());
        refusedUnchanged(db, dev.consistencykit.core.IdempotencyConflictException.class, "already used",
                s -> s.commit(ChangeSet.on(ROOT, 2).id(OperationId.of("staged")).put("i0", Catalogue.product("y", 1))
                        .build()));
    }

    @Test
    void shouldRefuseTimeTravelOutsideTheCommittedVersions(MongoDatabase db) {
        refusedUnchanged(db, InvalidInputException.class, "version 3 is ahead of root catalogue's committed version 2",
                s -> s.readAsOf(ROOT, 3));
        refusedUnchanged(db, InvalidInputException.class, "from (2) must be <= to (1)", s -> s.diff(ROOT, 2, 1));
    }
}
