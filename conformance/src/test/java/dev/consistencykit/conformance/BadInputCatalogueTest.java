package dev.consistencykit.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.bson.BsonUndefined;
import org.bson.Document;
import org.bson.json.JsonObject;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.MasterUpdate;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.DatabaseSnapshot;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseTransaction;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Hostile and malformed input through the five entry types and their builders: each case is refused with a typed
 * exception whose message names the field, before the first write, and every collection of the database reads back
 * exactly as before. One database for the whole catalogue, seeded once; a case that wrote anything fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputCatalogueTest {

    /** A case: what the caller does, the exception it must get and the field its message must name. */
    private record Case(String name, Class<? extends Throwable> type, String field, Action action) {
    }

    @FunctionalInterface
    private interface Action {
        void run() throws Exception;
    }

    private static final String HUGE = "x".repeat(17 * 1024 * 1024);
    /** An id of 6 MB: each value alone fits a document, but not on every document its operation touches. */
    private static final String BIG_ID = "i".repeat(6 * 1024 * 1024);
    /** One byte over the id limit, in two-byte characters: the limit counts UTF-8 bytes, not characters. */
    private static final String LONG_ID = "\u00e9".repeat(Ids.MAX_ID_BYTES / 2) + "x";
    /** Half of what one document holds: two participants carrying it make a transaction record too large. */
    private static final String HALF = "h".repeat(9 * 1024 * 1024);

    private MongoDatabase db;
    private TwoPhaseCommit payments;
    private JobQueue jobs;
    private Ledger ledger;
    private VersionedStore catalogue;
    private SyncFlag sync;
    private MongoCollection<Document> orders;

    @BeforeAll
    void seed() {
        db = MongoTarget.fromEnvironment().client().getDatabase(MongoTestExtension.freshName("catalogue"));
        db.getCollection("accounts").insertMany(List.of(new Document("_id", "alice").append("balance", 100L),
                new Document("_id", "bob").append("balance", 100L), new Document("_id", 1).append("balance", 5L)));
        orders = db.getCollection("orders");
        orders.insertOne(new Document("_id", "o1").append("status", "new"));
        db.getCollection("users").insertOne(new Document("_id", "u1").append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", "c1").append("authorId", "u1")
                .append("authorName", "Ann"));
        payments = TwoPhaseCommit.builder(db).name("payments").build();
        payments.ensureIndexes();
        jobs = JobQueue.builder(db).name("jobs").handler("noop", ctx -> { }).build();
        jobs.ensureIndexes();
        ledger = Ledger.builder(db).name("ledger").build();
        ledger.ensureIndexes();
        catalogue = VersionedStore.builder(db).name("catalogue").build();
        catalogue.ensureIndexes();
        catalogue.createRoot("cat");
        sync = SyncFlag.builder(db).name("profiles").master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();
    }

    @AfterAll
    void drop() {
        MongoTarget.drop(db);
    }

    private static Document deep(int levels) {
        Document d = new Document("leaf", 1);
        for (int i = 0; i < levels; i++) {
            d = new Document("n", d);
        }
        return d;
    }

    private ChangeSet put(Object itemId, Document value) {
        return ChangeSet.on("cat", 0).put(itemId, value).build();
    }

    private Participant account(Object id) {
        return Participant.on("accounts", id);
    }

    private List<Case> twoPhase() {
        return List.of(
                new Case("transfer from an operator document", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), new Document("$ne", null), "bob",
                                1))),
                new Case("transfer to a driver filter", InvalidInputException.class, "to",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice", Filters.gt("_id", ""),
                                1))),
                new Case("transfer to a JsonObject operator", InvalidInputException.class, "to",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice",
                                new JsonObject("{\"$gt\": \"\"}"), 1))),
                new Case("transfer from null", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), null, "bob", 1))),
                new Case("transfer from a blank id", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "  ", "bob", 1))),
                new Case("transfer to itself", InvalidInputException.class, "to",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice", "alice", 1))),
                new Case("transfer to itself under another integer width", InvalidInputException.class, "to",
                        () -> payments.transfer(Transfer.of(OperationId.random(), 1, 1L, 1))),
                new Case("transfer of zero", InvalidInputException.class, "amount",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice", "bob", 0))),
                new Case("transfer of a negative amount", InvalidInputException.class, "amount",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice", "bob", -5))),
                new Case("transfer of an amount beyond a long", InvalidInputException.class, "amount",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "alice", "bob",
                                BigInteger.TWO.pow(64)))),
                new Case("transfer from an array", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), List.of("alice"), "bob", 1))),
                new Case("transfer from a regular expression", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), Pattern.compile(".*"), "bob",
                                1))),
                new Case("transfer from NaN", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), Double.NaN, "bob", 1))),
                new Case("transfer from a Decimal128 NaN", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), Decimal128.NaN, "bob", 1))),
                new Case("transfer from undefined", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), new BsonUndefined(), "bob", 1))),
                new Case("transfer from a string with an unpaired surrogate", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), "al\uD800ice", "bob", 1))),
                new Case("transfer from a UUID the client has no representation for", InvalidInputException.class,
                        "from", () -> payments.transfer(Transfer.of(OperationId.random(), UUID.randomUUID(), "bob",
                                1))),
                new Case("transfer from an object no codec stores", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), new Object(), "bob", 1))),
                new Case("transaction without participants", InvalidInputException.class, "participants",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(), List.of()))),
                new Case("participant in an operator-named collection", InvalidInputException.class, "collection",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                Participant.on("$cmd", "alice")))),
                new Case("participant in the transactions collection", InvalidInputException.class, "collection",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                Participant.on("transactions", "alice")))),
                new Case("participant named twice under two integer widths", InvalidInputException.class,
                        "participants", () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account(1), account(1L)))),
                new Case("participant update with $where", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(new Document("$where", "sleep(1000)"))))),
                new Case("participant update that replaces the document", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(new Document("balance", 0))))),
                new Case("participant update of the reservations", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.unset("reservedTransactions"))))),
                new Case("participant update of _id", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.set("_id", "eve"))))),
                new Case("participant update whose value is an operator", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.set("tier", new Document("$gt", 1)))))),
                new Case("participant update with a dotted key in a value", InvalidInputException.class, "commit",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").commit(Updates.set("tags", new Document("a.b", 1)))))),
                new Case("participant $inc of a string", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.inc("balance", 1).toBsonDocument()
                                        .append("$inc", new org.bson.BsonDocument("balance",
                                                new org.bson.BsonString("1"))))))),
                new Case("participant update holding a value no codec stores", InvalidInputException.class,
                        "rollback", () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").rollback(Updates.set("x", new Object()))))),
                new Case("participant update over 16 MB", InvalidInputException.class, "prepare",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.set("note", HUGE))))),
                new Case("precondition with $where", InvalidInputException.class, "precondition",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").when(Filters.where("true"))))),
                new Case("precondition with $expr", InvalidInputException.class, "precondition",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").when(Filters.expr(new Document("$eq", List.of(1, 1))))))),
                new Case("precondition $in holding a regular expression", InvalidInputException.class,
                        "precondition", () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").when(Filters.in("tier", Pattern.compile(".*")))))),
                new Case("settled read of an operator id", InvalidInputException.class, "ids[0]",
                        () -> payments.readSettled("accounts", List.of(new Document("$gt", "")),
                                Duration.ofMillis(10))),
                new Case("settled read in an operator-named collection", InvalidInputException.class, "collection",
                        () -> payments.readSettled("$accounts", List.of("alice"), Duration.ofMillis(10))),
                new Case("builder with a blank name", IllegalArgumentException.class, "name",
                        () -> TwoPhaseCommit.builder(db).name(" ")),
                new Case("builder with an operator-named accounts collection", InvalidInputException.class,
                        "accountsCollection", () -> TwoPhaseCommit.builder(db).accountsCollection("$x").build()),
                new Case("builder with a dotted balance field", InvalidInputException.class, "balanceField",
                        () -> TwoPhaseCommit.builder(db).balanceField("a.$b").build()));
    }

    private List<Case> jobQueue() {
        return List.of(
                new Case("job of a blank type", InvalidInputException.class, "type",
                        () -> jobs.enqueue(JobRequest.of(" ", new Document()))),
                new Case("job of no type", InvalidInputException.class, "type",
                        () -> jobs.enqueue(JobRequest.of(null, new Document()))),
                new Case("job payload with an operator key", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("$set", 1)))),
                new Case("job payload hiding an operator in a JsonObject", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("user",
                                new JsonObject("{\"$ne\": null}"))))),
                new Case("job payload hiding an operator in a driver filter", InvalidInputException.class,
                        "payload", () -> jobs.enqueue(JobRequest.of("noop", new Document("user",
                                Filters.gt("role", ""))))),
                new Case("job payload hiding an operator inside an array", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("users",
                                List.of("a", Map.of("$where", "1")))))),
                new Case("job payload with a dotted key", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("a.b", 1)))),
                new Case("job payload with a NUL in a key", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("a\u0000b", 1)))),
                new Case("job payload nested beyond MongoDB's depth", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", deep(120)))),
                new Case("job payload over 16 MB", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("blob", HUGE)))),
                new Case("job payload holding a value no codec stores", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("x", new Object())))),
                new Case("job payload with an unpaired surrogate", InvalidInputException.class, "payload",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document("name", "\uDC00")))),
                new Case("job with no attempts allowed", InvalidInputException.class, "maxAttempts",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).withMaxAttempts(0))),
                new Case("job due in the past", InvalidInputException.class, "delay",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).delayedBy(Duration.ofSeconds(-1)))),
                new Case("job with a blank dedupe key", InvalidInputException.class, "dedupeKey",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).withDedupeKey(" "))),
                new Case("job with a blank id", InvalidInputException.class, "operationId",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).withId(OperationId.of(" ")))),
                new Case("job with a document as id", InvalidInputException.class, "operationId",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document())
                                .withId(new OperationId(new Document("$gt", ""))))),
                new Case("business write on an operator id", InvalidInputException.class, "documentId",
                        () -> jobs.enqueueWith(orders, new Document("$ne", "x"), null, Updates.set("status", "paid"),
                                JobRequest.of("noop", new Document()))),
                new Case("business write that replaces the document", InvalidInputException.class,
                        "businessUpdate", () -> jobs.enqueueWith(orders, "o1", null, new Document("status", "paid"),
                                JobRequest.of("noop", new Document()))),
                new Case("business write of the outbox itself", InvalidInputException.class, "businessUpdate",
                        () -> jobs.enqueueWith(orders, "o1", null, Updates.unset("jobOutbox"),
                                JobRequest.of("noop", new Document()))),
                new Case("business write of the applied marks", InvalidInputException.class, "businessUpdate",
                        () -> jobs.enqueueWith(orders, "o1", null, Updates.set("appliedJobs", List.of()),
                                JobRequest.of("noop", new Document()))),
                new Case("business write whose value is an operator", InvalidInputException.class,
                        "businessUpdate", () -> jobs.enqueueWith(orders, "o1", null, Updates.set("status",
                                new Document("$literal", "x")), JobRequest.of("noop", new Document()))),
                new Case("business filter running code", InvalidInputException.class, "businessFilter",
                        () -> jobs.enqueueWith(orders, "o1", Filters.where("true"), Updates.set("status", "paid"),
                                JobRequest.of("noop", new Document()))),
                new Case("business write with an invalid job", InvalidInputException.class, "payload",
                        () -> jobs.enqueueWith(orders, "o1", null, Updates.set("status", "paid"),
                                JobRequest.of("noop", new Document("$inc", 1)))),
                new Case("business write on no collection", NullPointerException.class, "business",
                        () -> jobs.enqueueWith(null, "o1", null, Updates.set("status", "paid"),
                                JobRequest.of("noop", new Document()))),
                new Case("builder with an operator-named collection", InvalidInputException.class, "collection",
                        () -> JobQueue.builder(db).collection("$jobs").build()),
                new Case("builder with no attempts", IllegalArgumentException.class, "maxAttempts",
                        () -> JobQueue.builder(db).maxAttempts(0)));
    }

    private List<Case> ledger() {
        return List.of(
                new Case("change on a blank account", InvalidInputException.class, "account",
                        () -> ledger.append(LedgerTransaction.of(Change.credit(" ", 5)))),
                new Case("change on an operator account", InvalidInputException.class, "account",
                        () -> ledger.append(LedgerTransaction.of(Change.credit("$where", 5)))),
                new Case("change on no account", InvalidInputException.class, "account",
                        () -> ledger.append(LedgerTransaction.of(Change.credit(null, 5)))),
                new Case("change on an account with an unpaired surrogate", InvalidInputException.class, "account",
                        () -> ledger.append(LedgerTransaction.of(Change.credit("acc\uD834", 5)))),
                new Case("change of zero", InvalidInputException.class, "value",
                        () -> ledger.append(LedgerTransaction.of(Change.credit("a", 0)))),
                new Case("change of a negative value", InvalidInputException.class, "value",
                        () -> ledger.append(LedgerTransaction.of(Change.debit("a", -1)))),
                new Case("transaction without changes", InvalidInputException.class, "changes",
                        () -> ledger.append(LedgerTransaction.of())),
                new Case("balance of an operator account", InvalidInputException.class, "account",
                        () -> ledger.balance("$gt")),
                new Case("cursor on a blank account", InvalidInputException.class, "account",
                        () -> ledger.cursor("", 0)),
                new Case("reconcile of no account", InvalidInputException.class, "account",
                        () -> ledger.reconcile(null, true)),
                new Case("cancel of a document id", InvalidInputException.class, "operationId",
                        () -> ledger.cancel(new OperationId(Map.of("$ne", 1)))),
                new Case("builder with a dotted ledger collection", InvalidInputException.class, "ledgerCollection",
                        () -> Ledger.builder(db).collections("a.$b", "acc", "arch").build()));
    }

    private List<Case> versioning() {
        return List.of(
                new Case("root of an operator id", InvalidInputException.class, "rootId",
                        () -> catalogue.createRoot(new Document("$gt", ""))),
                new Case("root of no id", InvalidInputException.class, "rootId",
                        () -> catalogue.createRoot(null)),
                new Case("root of an array id", InvalidInputException.class, "rootId",
                        () -> catalogue.createRoot(List.of(1, 2))),
                new Case("root of a regular expression", InvalidInputException.class, "rootId",
                        () -> catalogue.createRoot(Pattern.compile("c.*"))),
                new Case("item of an operator id", InvalidInputException.class, "itemId",
                        () -> catalogue.commit(put(new Document("$ne", 1), new Document("v", 1)))),
                new Case("item of a driver filter id", InvalidInputException.class, "itemId",
                        () -> catalogue.commit(put(Filters.eq("a", 1), new Document("v", 1)))),
                new Case("item value with an operator key", InvalidInputException.class, "value of item",
                        () -> catalogue.commit(put("i1", new Document("$set", new Document("v", 1))))),
                new Case("item value hiding an operator in a JsonObject", InvalidInputException.class,
                        "value of item", () -> catalogue.commit(put("i1", new Document("q",
                                new JsonObject("{\"$where\": \"1\"}"))))),
                new Case("item value over 16 MB", InvalidInputException.class, "value of item",
                        () -> catalogue.commit(put("i1", new Document("blob", HUGE)))),
                new Case("item value nested beyond MongoDB's depth", InvalidInputException.class, "value of item",
                        () -> catalogue.commit(put("i1", deep(150)))),
                new Case("item value holding a value no codec stores", InvalidInputException.class,
                        "value of item", () -> catalogue.commit(put("i1", new Document("x", new Object())))),
                new Case("meta with an operator key", InvalidInputException.class, "meta",
                        () -> catalogue.commit(ChangeSet.on("cat", 0).put("i1", new Document("v", 1))
                                .meta(new Document("$inc", 1)).build())),
                new Case("change set on a negative base version", InvalidInputException.class, "baseVersion",
                        () -> catalogue.commit(ChangeSet.on("cat", -1).put("i1", new Document("v", 1)).build())),
                new Case("empty change set", InvalidInputException.class, "changes",
                        () -> catalogue.commit(ChangeSet.on("cat", 0).build())),
                new Case("read of an operator root", InvalidInputException.class, "rootId",
                        () -> catalogue.read(Map.of("$exists", true))),
                new Case("get of an operator item", InvalidInputException.class, "itemId",
                        () -> catalogue.get("cat", new Document("$type", "string"))),
                new Case("history of a NaN item", InvalidInputException.class, "itemId",
                        () -> catalogue.history("cat", Double.NaN)),
                new Case("builder with an operator-named roots collection", InvalidInputException.class,
                        "rootsCollection", () -> VersionedStore.builder(db).collections("$r", "i", "h").build()));
    }

    private List<Case> syncFlag() {
        return List.of(
                new Case("update of an operator master id", InvalidInputException.class, "masterId",
                        () -> sync.update(new Document("$ne", "ann"), Updates.set("name", "Bob"))),
                new Case("update of a master id hidden in a JsonObject", InvalidInputException.class, "masterId",
                        () -> sync.update(new JsonObject("{\"$exists\": true}"), Updates.set("name", "Bob"))),
                new Case("update that replaces the document", InvalidInputException.class, "update",
                        () -> sync.update("u1", new Document("name", "Bob"))),
                new Case("update of the flag itself", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.set("syncing", new Document("op", "x")))),
                new Case("update whose value is an operator", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.set("name", new Document("$concat", List.of("a"))))),
                new Case("update whose value hides an operator in a JsonObject", InvalidInputException.class,
                        "update", () -> sync.update("u1", Updates.set("bio", new JsonObject("{\"$ne\": 1}")))),
                new Case("update with $where", InvalidInputException.class, "update",
                        () -> sync.update("u1", new Document("$where", "1"))),
                new Case("update that removes a copied field", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.unset("name"))),
                new Case("update that renames into _id", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.rename("name", "_id"))),
                new Case("update through a filtered positional path", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.set("tags.$[t]", "x"))),
                new Case("update over 16 MB", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.set("bio", HUGE))),
                new Case("update holding a value no codec stores", InvalidInputException.class, "update",
                        () -> sync.update("u1", Updates.set("bio", new Object()))),
                new Case("update of no master", InvalidInputException.class, "masterId",
                        () -> sync.apply(MasterUpdate.of(null, Updates.set("name", "Bob")))),
                new Case("read repair of an operator id", InvalidInputException.class, "master._id",
                        () -> sync.readRepair(new Document("_id", new Document("$ne", "x")).append("syncing",
                                new Document("op", "op-1").append("at", new Date(0))))),
                new Case("read repair of an operator operation", InvalidInputException.class, "syncing.op",
                        () -> sync.readRepair(new Document("_id", "u1").append("syncing",
                                new Document("op", new Document("$exists", true)).append("at", new Date(0))))),
                new Case("resync of an operator id", InvalidInputException.class, "masterId",
                        () -> sync.resync(new Document("$gt", ""))),
                new Case("builder with an operator-named master", InvalidInputException.class, "masterCollection",
                        () -> SyncFlag.builder(db).master("$users", "name")
                                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build()));
    }

    /** Values each within a type's rules but past the server's limits, through every entry type. */
    private List<Case> oversized() {
        return List.of(
                new Case("transfer under a 6 MB operation id", InvalidInputException.class, "operationId",
                        () -> payments.transfer(Transfer.of(OperationId.of(BIG_ID), "alice", "bob", 1))),
                new Case("transfer from an id past the id limit", InvalidInputException.class, "from",
                        () -> payments.transfer(Transfer.of(OperationId.random(), LONG_ID, "bob", 1))),
                new Case("transaction whose record would pass 16 MB", InvalidInputException.class, "transaction",
                        () -> payments.apply(TwoPhaseTransaction.of(OperationId.random(),
                                account("alice").prepare(Updates.set("note", HALF)),
                                account("bob").prepare(Updates.set("note", HALF))))),
                new Case("job under a 6 MB id", InvalidInputException.class, "operationId",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).withId(OperationId.of(BIG_ID)))),
                new Case("job with a dedupe key past the id limit", InvalidInputException.class, "dedupeKey",
                        () -> jobs.enqueue(JobRequest.of("noop", new Document()).withDedupeKey(LONG_ID))),
                new Case("job outboxed on a document id past the limit", InvalidInputException.class, "documentId",
                        () -> jobs.enqueueWith(orders, LONG_ID, null, Updates.set("status", "paid"),
                                JobRequest.of("noop", new Document()))),
                new Case("ledger transaction under a 6 MB id", InvalidInputException.class, "id",
                        () -> ledger.append(LedgerTransaction.of(Change.credit("a", 5))
                                .withId(OperationId.of(BIG_ID)))),
                new Case("ledger account past the id limit", InvalidInputException.class, "account",
                        () -> ledger.append(LedgerTransaction.of(Change.credit(LONG_ID, 5)))),
                new Case("change set under a 6 MB id", InvalidInputException.class, "id",
                        () -> catalogue.commit(ChangeSet.on("cat", 0).id(OperationId.of(BIG_ID))
                                .put("i1", new Document("v", 1)).build())),
                new Case("item id past the id limit", InvalidInputException.class, "itemId",
                        () -> catalogue.commit(put(LONG_ID, new Document("v", 1)))),
                new Case("root id past the id limit", InvalidInputException.class, "root",
                        () -> catalogue.createRoot(LONG_ID)),
                new Case("sync of a master id past the id limit", InvalidInputException.class, "masterId",
                        () -> sync.update(LONG_ID, Updates.set("name", "Bob"))));
    }

    private List<Case> all() {
        List<Case> cases = new ArrayList<>();
        cases.addAll(oversized());
        cases.addAll(twoPhase());
        cases.addAll(jobQueue());
        cases.addAll(ledger());
        cases.addAll(versioning());
        cases.addAll(syncFlag());
        return cases;
    }

    @TestFactory
    Stream<DynamicTest> shouldRefuseEveryBadInputTypedNamedAndBeforeTheFirstWrite() {
        return all().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            DatabaseSnapshot before = DatabaseSnapshot.of(db);

            Throwable thrown = catchThrowable(c.action()::run);

            assertThat(thrown).as(c.name()).isInstanceOf(c.type());
            assertThat(thrown.getMessage()).as(c.name()).contains(c.field());
            if (thrown instanceof InvalidInputException invalid) {
                assertThat(invalid.field()).as(c.name()).isNotBlank();
            }
            assertThat(DatabaseSnapshot.of(db)).as(c.name() + ": database unchanged").isEqualTo(before);
        }));
    }

    @Test
    void shouldHoldAtLeastEightyCases() {
        assertThat(all()).hasSizeGreaterThanOrEqualTo(80);
        assertThat(all().stream().map(Case::name).distinct().count()).isEqualTo(all().size());
    }

    @Test
    void shouldEscapeControlCharactersOfTheValueInTheMessage() {
        Throwable thrown = catchThrowable(() -> payments.transfer(Transfer.of(OperationId.random(),
                "alice\nINFO forged log line\u0007", "alice\nINFO forged log line\u0007", 1)));

        assertThat(thrown).isInstanceOf(InvalidInputException.class);
        assertThat(thrown.getMessage()).doesNotContain("\n").doesNotContain("\u0007").contains("\\n")
                .contains("\\u0007");
    }

    @Test
    void shouldNeverLetAnIdCollideWithAnotherThatOnlyPrintsAlike() {
        // "1" and 1 are two documents: a transfer between them is not a transfer to itself
        Optional<Throwable> none = Optional.ofNullable(catchThrowable(() -> payments.transferTransaction(
                Transfer.of(OperationId.random(), "1", 1, 1))));

        assertThat(none).isEmpty();
    }
}
