package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ServerDatabases;

/** The bounded exactly-once lifecycle of {@link OnceEffects}, against a real wire-protocol server. */
@ExtendWith(ServerDatabases.class)
class OnceEffectsServerTest {

    private static final EffectMarker MARKER = EffectMarker.of("reserved", "applied");

    private static MongoCollection<Document> accounts(MongoDatabase db) {
        MongoCollection<Document> c = db.getCollection("accounts");
        c.insertOne(new Document("_id", "a").append("balance", 100L));
        c.insertOne(new Document("_id", "b").append("balance", 100L));
        return c;
    }

    private static Document read(MongoCollection<Document> c, Object id) {
        return c.find(eq("_id", id)).first();
    }

    private static List<MarkerWrite> debit(long amount, String... ids) {
        return java.util.Arrays.stream(ids).map(id -> new MarkerWrite(id, gte("balance", amount),
                Updates.inc("balance", -amount))).toList();
    }

    private static void fullCycle(MongoCollection<Document> c, Object op, String nonce) {
        OnceEffects.reserve(c, MARKER, op, nonce, debit(1, "a"));
        OnceEffects.apply(c, MARKER, op, nonce, debit(1, "a"));
        OnceEffects.settle(c, MARKER, op, List.of(MarkerWrite.of("a", null)));
    }

    @Test
    void shouldApplyOnceAndLeaveNoEvidenceWhenSettled(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);

        Map<Object, GuardedResult> reserved = OnceEffects.reserve(c, MARKER, "t1", "n1", debit(30, "a", "b"));
        Map<Object, GuardedResult> applied = OnceEffects.apply(c, MARKER, "t1", "n1", debit(30, "a", "b"));
        Map<Object, GuardedResult> again = OnceEffects.apply(c, MARKER, "t1", "n1", debit(30, "a", "b"));
        Map<Object, GuardedResult> settled = OnceEffects.settle(c, MARKER, "t1",
                List.of(MarkerWrite.of("a", null), MarkerWrite.of("b", null)));

        assertThat(reserved.values()).extracting(GuardedResult::outcome).containsOnly(UpdateOutcome.APPLIED);
        assertThat(applied.values()).extracting(GuardedResult::outcome).containsOnly(UpdateOutcome.APPLIED);
        assertThat(again.values()).extracting(GuardedResult::outcome).containsOnly(UpdateOutcome.ALREADY_APPLIED);
        assertThat(settled.values()).extracting(GuardedResult::outcome).containsOnly(UpdateOutcome.APPLIED);
        for (String id : List.of("a", "b")) {
            Document d = read(c, id);
            assertThat(d.getLong("balance")).isEqualTo(70);
            assertThat(d).as("no marker array, not even an empty one").doesNotContainKeys("reserved", "applied");
        }
    }

    @Test
    void shouldRefuseLateApplyWhenEveryTraceOfTheOperationIsGone(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        fullCycle(c, "t1", "n1");

        // the same apply request, sent again by a writer that slept through the whole operation
        Map<Object, GuardedResult> late = OnceEffects.apply(c, MARKER, "t1", "n1", debit(1, "a"));

        assertThat(late.get("a").outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(read(c, "a").getLong("balance")).isEqualTo(99);
    }

    @Test
    void shouldApplyNothingWhenLateReservationLandsAndReleaseItWhenMet(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        fullCycle(c, "t1", "n1");

        Map<Object, GuardedResult> late = OnceEffects.reserve(c, MARKER, "t1", "n0", debit(1, "a"));

        assertThat(late.get("a").outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(read(c, "a").getLong("balance")).as("a reservation carries no effect").isEqualTo(99);
        assertThat(OnceEffects.release(c, MARKER, "t1", "n0", List.of("a"))).isEqualTo(1);
        assertThat(read(c, "a")).doesNotContainKeys("reserved");
    }

    @Test
    void shouldRemoveTheArraysOnlyWithTheirLastEntry(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        OnceEffects.reserve(c, MARKER, "t1", "n1", debit(1, "a"));
        OnceEffects.reserve(c, MARKER, "t2", "n2", debit(1, "a"));

        OnceEffects.apply(c, MARKER, "t1", "n1", debit(1, "a"));
        assertThat(read(c, "a").getList("reserved", Document.class)).hasSize(1);
        OnceEffects.apply(c, MARKER, "t2", "n2", debit(1, "a"));
        assertThat(read(c, "a")).doesNotContainKeys("reserved");
        assertThat(read(c, "a").getList("applied", Object.class)).containsExactly("t1", "t2");

        OnceEffects.settle(c, MARKER, "t2", List.of(MarkerWrite.of("a", null)));
        assertThat(read(c, "a").getList("applied", Object.class)).containsExactly("t1");
        OnceEffects.settle(c, MARKER, "t1", List.of(MarkerWrite.of("a", null)));
        assertThat(read(c, "a")).doesNotContainKeys("reserved", "applied");
        assertThat(read(c, "a").getLong("balance")).isEqualTo(98);
    }

    @Test
    void shouldRefuseApplyOfAnAttemptWhoseReservationWasTakenOver(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        OnceEffects.reserve(c, MARKER, "t1", "old", debit(10, "a"));

        Map<Object, GuardedResult> second = OnceEffects.reserve(c, MARKER, "t1", "new", debit(10, "a"));
        GuardedResult taken = OnceEffects.takeOver(c, MARKER, "a", "t1", "old", "new");
        Map<Object, GuardedResult> lateOld = OnceEffects.apply(c, MARKER, "t1", "old", debit(10, "a"));
        Map<Object, GuardedResult> byNew = OnceEffects.apply(c, MARKER, "t1", "new", debit(10, "a"));

        assertThat(second.get("a").outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(MARKER.evidence(second.get("a").document().orElseThrow(), "t1", "new"))
                .isEqualTo(EffectMarker.Evidence.RESERVED_BY_OTHER);
        assertThat(taken.outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(lateOld.get("a").outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(byNew.get("a").outcome()).isEqualTo(UpdateOutcome.APPLIED);
        assertThat(read(c, "a").getLong("balance")).isEqualTo(90);
    }

    @Test
    void shouldNotReserveWhenTheOperationIsAlreadyAppliedThere(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        OnceEffects.reserve(c, MARKER, "t1", "n1", debit(10, "a"));
        OnceEffects.apply(c, MARKER, "t1", "n1", debit(10, "a"));

        Map<Object, GuardedResult> again = OnceEffects.reserve(c, MARKER, "t1", "n2", debit(10, "a"));
        Map<Object, GuardedResult> apply = OnceEffects.apply(c, MARKER, "t1", "n2", debit(10, "a"));

        assertThat(again.get("a").outcome()).isEqualTo(UpdateOutcome.ALREADY_APPLIED);
        assertThat(apply.get("a").outcome()).isEqualTo(UpdateOutcome.ALREADY_APPLIED);
        assertThat(read(c, "a").getLong("balance")).isEqualTo(90);
    }

    @Test
    void shouldKeepTheReservationWhenTheGuardRefusesTheApply(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        OnceEffects.reserve(c, MARKER, "t1", "n1", List.of(MarkerWrite.of("a", null)));

        Map<Object, GuardedResult> apply = OnceEffects.apply(c, MARKER, "t1", "n1", debit(500, "a"));

        assertThat(apply.get("a").outcome()).isEqualTo(UpdateOutcome.GUARD_FAILED);
        assertThat(MARKER.evidence(apply.get("a").document().orElseThrow(), "t1", "n1"))
                .isEqualTo(EffectMarker.Evidence.RESERVED);
        assertThat(OnceEffects.release(c, MARKER, "t1", null, List.of("a"))).isEqualTo(1);
        assertThat(read(c, "a").getLong("balance")).isEqualTo(100);
    }

    @Test
    void shouldKeepTheSameSizeAfterTenOrAThousandOperations(MongoDatabase db) {
        MongoCollection<Document> c = accounts(db);
        for (int i = 0; i < 10; i++) {
            fullCycle(c, "op-" + i, "n");
        }
        int afterTen = size(c);
        for (int i = 10; i < 1_000; i++) {
            fullCycle(c, "op-" + i, "n");
        }
        assertThat(size(c)).isEqualTo(afterTen);
    }

    private static int size(MongoCollection<Document> c) {
        return c.withDocumentClass(RawBsonDocument.class).find(eq("_id", "a")).first().getByteBuffer().remaining();
    }
}
