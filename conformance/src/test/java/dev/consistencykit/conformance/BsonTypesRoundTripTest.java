package dev.consistencykit.conformance;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.codecs.pojo.PojoCodecProvider;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseTransaction;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/**
 * What a user's client can store, every pattern accepts: on a client configured for standard UUIDs and POJOs, UUID
 * ids, compound ids and POJO values go through each pattern and read back as they were written.
 */
class BsonTypesRoundTripTest {

    /** A POJO the caller's registry knows (and the driver's default registry does not). */
    public static final class Address {
        private String street;
        private String city;

        public Address() {
        }

        Address(String street, String city) {
            this.street = street;
            this.city = city;
        }

        public String getStreet() {
            return street;
        }

        public void setStreet(String street) {
            this.street = street;
        }

        public String getCity() {
            return city;
        }

        public void setCity(String city) {
            this.city = city;
        }
    }

    private static final Address HOME = new Address("1 Main St", "Springfield");
    private static final Document HOME_STORED = new Document("city", "Springfield").append("street", "1 Main St");

    private MongoClient client;
    private MongoDatabase db;

    @BeforeEach
    void connect() {
        CodecRegistry registry = CodecRegistries.fromRegistries(MongoClientSettings.getDefaultCodecRegistry(),
                CodecRegistries.fromProviders(PojoCodecProvider.builder().automatic(true).build()));
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(MongoTarget.fromEnvironment().connectionString())
                .uuidRepresentation(UuidRepresentation.STANDARD).codecRegistry(registry).build());
        db = client.getDatabase(MongoTestExtension.freshName("bsontypes"));
    }

    @AfterEach
    void drop() {
        MongoTarget.drop(db);
        client.close();
    }

    private static Document stored(Document d, String field) {
        Object value = d.get(field);
        return value instanceof Document doc ? new Document(doc) : null;
    }

    @Test
    void shouldMoveMoneyBetweenUuidAccountsAndStoreUuidAndPojoValues() {
        UUID alice = UUID.randomUUID();
        UUID bob = UUID.randomUUID();
        UUID ref = UUID.randomUUID();
        db.getCollection("accounts").insertMany(List.of(new Document("_id", alice).append("balance", 100L),
                new Document("_id", bob).append("balance", 100L)));
        TwoPhaseCommit payments = TwoPhaseCommit.builder(db).build();
        payments.ensureIndexes();

        assertThat(payments.transfer(Transfer.of(OperationId.of("t1"), alice, bob, 30)).isCommitted()).isTrue();
        OperationResult tagged = payments.apply(TwoPhaseTransaction.of(OperationId.of("t2"),
                Participant.on("accounts", alice).when(Filters.gte("balance", 0))
                        .commit(Updates.combine(Updates.set("lastRef", ref), Updates.set("address", HOME))),
                Participant.on("accounts", bob).prepare(Updates.set("lastRef", ref))));

        assertThat(tagged.isCommitted()).as(tagged.toString()).isTrue();
        Document a = db.getCollection("accounts").find(eq("_id", alice)).first();
        assertThat(a.getLong("balance")).isEqualTo(70L);
        assertThat(a.get("lastRef")).isEqualTo(ref);
        assertThat(stored(a, "address")).isEqualTo(HOME_STORED);
        assertThat(db.getCollection("accounts").find(eq("_id", bob)).first().getLong("balance")).isEqualTo(130L);
        SettledRead read = payments.readSettled("accounts", List.of(alice, bob), Duration.ofSeconds(5));
        assertThat(read.documents()).extracting(d -> d.get("_id")).containsExactly(alice, bob);
        assertThat(payments.recover(Duration.ZERO).examined()).isZero();
    }

    @Test
    void shouldRunJobsWhosePayloadAndEffectsHoldUuidsAndPojos() {
        UUID user = UUID.randomUUID();
        Document compound = new Document("tenant", "acme").append("n", 7L);
        db.getCollection("users").insertMany(List.of(new Document("_id", user).append("n", 0),
                new Document("_id", compound).append("n", 0)));
        AtomicReference<Object> seen = new AtomicReference<>();
        JobQueue queue = JobQueue.builder(db).handler("touch", ctx -> {
            seen.set(ctx.payload().get("user"));
            ctx.applyOnce("users", ctx.payload().get("user"), Updates.combine(Updates.inc("n", 1),
                    Updates.set("address", HOME)));
            ctx.applyOnce("users", compound, Updates.inc("n", 1));
        }).build();
        queue.ensureIndexes();
        JobRequest job = JobRequest.of("touch", new Document("user", user).append("home", HOME)
                .append("at", new Date(0)).append("amount", Decimal128.parse("1.10"))).withId(OperationId.of("j1"));

        assertThat(queue.apply(job).isCommitted()).isTrue();
        // the same job again is the same job: payloads compare as stored, POJO and UUID included
        assertThat(queue.enqueue(job)).isEqualTo(OperationId.of("j1"));

        assertThat(seen.get()).isEqualTo(user);
        Document u = db.getCollection("users").find(eq("_id", user)).first();
        assertThat(u.getInteger("n")).isEqualTo(1);
        assertThat(stored(u, "address")).isEqualTo(HOME_STORED);
        assertThat(db.getCollection("users").find(eq("_id", compound)).first().getInteger("n")).isEqualTo(1);

        UUID order = UUID.randomUUID();
        db.getCollection("orders").insertOne(new Document("_id", order).append("status", "new"));
        assertThat(queue.enqueueWith(db.getCollection("orders"), order, null, Updates.set("shipTo", HOME),
                JobRequest.of("touch", new Document("user", user)).withId(OperationId.of("j2")))).isPresent();
        assertThat(stored(db.getCollection("orders").find(eq("_id", order)).first(), "shipTo"))
                .isEqualTo(HOME_STORED);
    }

    @Test
    void shouldKeepALedgerOnAClientConfiguredForUuidsAndPojos() {
        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();

        String account = "acct-" + UUID.randomUUID();
        assertThat(ledger.apply(LedgerTransaction.of(Change.credit(account, 5))).isCommitted()).isTrue();
        assertThat(ledger.apply(LedgerTransaction.transfer(account, "acct-b", 3)).isCommitted()).isTrue();

        assertThat(ledger.balance(account)).isEqualTo(2L);
        assertThat(ledger.balance("acct-b")).isEqualTo(3L);
    }

    @Test
    void shouldVersionTreesUnderUuidAndCompoundIdsWithPojoValues() {
        UUID root = UUID.randomUUID();
        UUID item = UUID.randomUUID();
        Document compound = new Document("sku", "A-1").append("size", 42);
        VersionedStore store = VersionedStore.builder(db).build();
        store.ensureIndexes();
        store.createRoot(root);

        store.commit(ChangeSet.on(root, 0).put(item, new Document("home", HOME).append("ref", item))
                .put(compound, new Document("price", Decimal128.parse("9.99"))).build());

        VersionedTree tree = store.read(root);
        assertThat(tree.version()).isEqualTo(1);
        assertThat(tree.item(item)).isPresent();
        assertThat(stored(tree.item(item).orElseThrow(), "home")).isEqualTo(HOME_STORED);
        assertThat(tree.item(item).orElseThrow().get("ref")).isEqualTo(item);
        assertThat(tree.item(new Document("sku", "A-1").append("size", 42L))).isPresent();
        assertThat(store.get(root, item)).isPresent();
        assertThat(store.history(root, compound)).hasSize(1);
    }

    @Test
    void shouldPropagateTheUpdateOfAUuidMasterCarryingAPojo() {
        UUID ann = UUID.randomUUID();
        db.getCollection("users").insertOne(new Document("_id", ann).append("name", "Ann"));
        db.getCollection("comments").insertOne(new Document("_id", new Binary((byte) 0, new byte[] {1}))
                .append("authorId", ann).append("authorName", "Ann"));
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();

        assertThat(sync.update(ann, Updates.combine(Updates.set("name", "Annie"), Updates.set("address", HOME)))
                .isCommitted()).isTrue();

        Document comment = db.getCollection("comments").find(eq("authorId", ann)).first();
        assertThat(comment.getString("authorName")).isEqualTo("Annie");
        Document master = db.getCollection("users").find(eq("_id", ann)).first();
        assertThat(stored(master, "address")).isEqualTo(HOME_STORED);
        assertThat(Objects.requireNonNull(master).get("syncing")).isNull();
    }
}
