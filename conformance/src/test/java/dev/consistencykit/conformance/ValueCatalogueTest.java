package dev.consistencykit.conformance;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.logreconciliation.Change;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.logreconciliation.LedgerTransaction;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/**
 * Each pattern's operations over documents and values from {@link ValueCases} (the generator the differential test
 * uses: every kind of value, numbers at their edges, nested documents and arrays): the outcome is the documented one
 * (the value goes through exactly as stored, type and all, or a typed refusal leaves the data as it was), never a raw
 * exception, never an amount created or lost. Two-phase's balances and the sync flag's versions have catalogues of
 * their own ({@code TransferValuesTest}, {@code VersionValuesTest}); here the values are the ones a user's documents
 * carry through each pattern.
 */
@ExtendWith(MongoTestExtension.class)
class ValueCatalogueTest {

    private static final long SEED = Long.getLong("catalogue.seed", 20_261_129L);
    private static final int VALUES = 60;

    @Test
    void shouldCopyEveryValueAMasterFieldTakesExactly(MongoDatabase db) {
        ValueCases cases = new ValueCases(SEED);
        SyncFlag sync = SyncFlag.builder(db).master("users", "name")
                .target(SyncTarget.in("comments", "authorId").copy("name", "authorName")).build();
        sync.ensureIndexes();
        MongoCollection<BsonDocument> users = db.getCollection("users", BsonDocument.class);
        MongoCollection<BsonDocument> comments = db.getCollection("comments", BsonDocument.class);
        List<String> problems = new ArrayList<>();
        // equal numbers of other types, and zeros of either sign: a copy must take the type too
        List<BsonValue[]> pairs = new ArrayList<>(List.of(
                new BsonValue[] {new BsonInt32(1), new BsonInt64(1)},
                new BsonValue[] {new BsonInt64(1), new BsonDecimal128(Decimal128.parse("1.0"))},
                new BsonValue[] {new BsonDecimal128(Decimal128.parse("1.0")), new BsonDecimal128(Decimal128.parse("1.00"))},
                new BsonValue[] {new BsonInt32(7), new BsonDouble(7.0)},
                new BsonValue[] {new BsonDouble(0.0), new BsonDouble(-0.0)},
                new BsonValue[] {new BsonDouble(Double.NaN), new BsonDecimal128(Decimal128.NaN)}));
        for (int i = 0; i < VALUES; i++) {
            pairs.add(new BsonValue[] {cases.value(), i % 3 == 0 ? cases.number() : cases.value()});
        }
        for (int i = 0; i < pairs.size(); i++) {
            BsonValue first = pairs.get(i)[0];
            BsonValue second = pairs.get(i)[1];
            users.insertOne(new BsonDocument("_id", new BsonInt32(i)).append("name", first));
            comments.insertOne(new BsonDocument("_id", new BsonInt32(i)).append("authorId", new BsonInt32(i))
                    .append("authorName", first));
            String what = "name " + EmbeddedServerDifferentialTest.json(first) + " then "
                    + EmbeddedServerDifferentialTest.json(second);
            try {
                OperationResult r = sync.update(i, Updates.set("name", second));
                if (!r.isCommitted()) {
                    problems.add(what + ": " + r);
                    continue;
                }
            } catch (ConsistencyException refused) {
                problems.add(what + ": refused, " + refused.getMessage());
                continue;
            }
            BsonDocument master = users.find(eq("_id", i)).first();
            BsonDocument copy = comments.find(eq("_id", i)).first();
            // neither server applies a $set of a number equal to the one in place in every case MongoDB does (the
            // embedded server: any equal number, of another type too; the real engine: a decimal 1.00 over 1.0, a
            // -0.0 over 0.0), the user's own update of the master included (docs/embedded-server.md, "an equal
            // number of another type"; docs/servers.md): then the copy must still be the master's value
            BsonValue expected = sameNumber(first, second) && first.equals(master.get("name")) ? first : second;
            if (!expected.equals(master.get("name")) || !expected.equals(copy.get("authorName"))) {
                problems.add(what + ": master " + master.toJson() + ", copy " + copy.toJson());
            }
            if (master.containsKey("syncing")) {
                problems.add(what + ": the flag stayed on the master " + master.toJson());
            }
        }
        assertThat(problems).isEmpty();
    }

    private static boolean sameNumber(BsonValue a, BsonValue b) {
        if (!(a.isNumber() || a.isDecimal128()) || !(b.isNumber() || b.isDecimal128())) {
            return false;
        }
        double x = a.isDecimal128() ? a.asDecimal128().getValue().doubleValue() : a.asNumber().doubleValue();
        double y = b.isDecimal128() ? b.asDecimal128().getValue().doubleValue() : b.asNumber().doubleValue();
        return x == y || (Double.isNaN(x) && Double.isNaN(y));
    }

    @Test
    void shouldVersionEveryValueAnItemHoldsExactly(MongoDatabase db) {
        ValueCases cases = new ValueCases(SEED + 1);
        VersionedStore store = VersionedStore.builder(db).build();
        store.ensureIndexes();
        List<String> problems = new ArrayList<>();
        List<BsonValue> values = new ArrayList<>();
        store.createRoot("r");
        ChangeSet.Builder change = ChangeSet.on("r", 0);
        for (int i = 0; i < VALUES; i++) {
            BsonValue v = cases.value();
            values.add(v);
            change.put("item" + i, new BsonDocument("v", v));
        }
        store.commit(change.build());
        // then two updates that leave every value in place: each writes the tree it read onto the root whole (a
        // value decoded and encoded again), which reads of the current version and of the one before it then use
        store.update("r", (tree, edit) -> edit.put("extra", new Document("n", 1)));
        store.update("r", (tree, edit) -> edit.put("extra", new Document("n", 2)));
        List<VersionedTree> reads = List.of(store.readAsOf("r", 1), store.readAsOf("r", 2), store.read("r"));
        for (VersionedTree tree : reads) {
            for (int i = 0; i < VALUES; i++) {
                Document item = tree.item("item" + i).orElse(null);
                BsonValue read = item == null ? null
                        : item.toBsonDocument(BsonDocument.class, db.getCodecRegistry()).get("v");
                if (!values.get(i).equals(read)) {
                    problems.add("item" + i + " at version " + tree.version() + ": put "
                            + EmbeddedServerDifferentialTest.json(values.get(i)) + ", read "
                            + EmbeddedServerDifferentialTest.json(read));
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void shouldRunAJobWhosePayloadHoldsEveryValueExactly(MongoDatabase db) {
        ValueCases cases = new ValueCases(SEED + 2);
        AtomicReference<Object> seen = new AtomicReference<>();
        JobQueue queue = JobQueue.builder(db).handler("see", ctx -> seen.set(ctx.payload().get("v"))).build();
        queue.ensureIndexes();
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < VALUES; i++) {
            BsonValue v = cases.value();
            Document payload = Document.parse(new BsonDocument("v", v).toJson(
                    org.bson.json.JsonWriterSettings.builder().outputMode(org.bson.json.JsonMode.EXTENDED).build()));
            seen.set(null);
            OperationResult r = queue.apply(JobRequest.of("see", payload).withId(OperationId.of("j" + i)));
            BsonValue saw = new Document("v", seen.get()).toBsonDocument(BsonDocument.class, db.getCodecRegistry())
                    .get("v");
            if (!r.isCommitted() || !v.equals(saw)) {
                problems.add(EmbeddedServerDifferentialTest.json(v) + ": " + r + ", the handler saw "
                        + EmbeddedServerDifferentialTest.json(saw));
            }
        }
        assertThat(problems).isEmpty();
    }

    /**
     * Amounts at the edges of a long: a credit or a transfer either lands exactly (every balance read back is the
     * exact sum of what was applied) or is refused, typed, with every balance as it was; never a wrapped balance.
     */
    @Test
    void shouldKeepEveryBalanceExactOrRefuseWhateverTheAmounts(MongoDatabase db) {
        ValueCases cases = new ValueCases(SEED + 3);
        Ledger ledger = Ledger.builder(db).build();
        ledger.ensureIndexes();
        List<String> problems = new ArrayList<>();
        BigInteger a = BigInteger.ZERO;
        BigInteger b = BigInteger.ZERO;
        for (int i = 0; i < VALUES; i++) {
            BsonValue n = cases.number();
            if (!(n instanceof BsonInt32) && !(n instanceof BsonInt64)) {
                continue;
            }
            long amount = n.asNumber().longValue();
            boolean transfer = i % 2 == 1;
            String what = (transfer ? "transfer " : "credit ") + amount;
            try {
                // a change of no positive amount is refused as it is made (InvalidInputException)
                LedgerTransaction tx = transfer ? LedgerTransaction.transfer("a", "b", amount)
                        : LedgerTransaction.of(Change.credit("a", amount));
                OperationResult r = ledger.apply(tx);
                if (r.isCommitted()) {
                    a = transfer ? a.subtract(BigInteger.valueOf(amount)) : a.add(BigInteger.valueOf(amount));
                    b = transfer ? b.add(BigInteger.valueOf(amount)) : b;
                }
            } catch (ConsistencyException refused) {
                // typed: the balances must be as they were, checked below
            }
            BigInteger readA = BigInteger.valueOf(ledger.balance("a"));
            BigInteger readB = BigInteger.valueOf(ledger.balance("b"));
            if (!readA.equals(a) || !readB.equals(b)) {
                problems.add(what + ": balances " + readA + ", " + readB + ", expected " + a + ", " + b);
                a = readA;
                b = readB;
            }
        }
        assertThat(problems).isEmpty();
    }

    /**
     * An account's cache in the user-writable accounts collection holding what the ledger never writes there (its
     * sequence number, balance, counter or checkpoint a string, a double, NaN, a decimal, null, an array, a document,
     * a long at its edge): the ledger's next credit and its balance are the log's (the cache is a cache), or a typed
     * refusal ({@code ForeignRecordException}); never a raw exception, never a balance read from a value the ledger
     * never writes. A whole number put in place of a cached balance or seqId (not negative) is a cache the ledger
     * trusts (its reconcile finds such a cache and repairs it): those cases are not checked against the log, only
     * that the calls end, typed or not.
     */
    @Test
    void shouldKeepTheBooksWhateverAnAccountsCacheHolds(MongoDatabase db) {
        List<BsonValue> odd = List.of(new org.bson.BsonString("x"), new BsonDouble(5.0), new BsonDouble(Double.NaN),
                new BsonDecimal128(Decimal128.parse("5")), org.bson.BsonNull.VALUE,
                new org.bson.BsonArray(List.of(new BsonInt32(1))), new BsonDocument("a", new BsonInt32(1)),
                new BsonInt32(3), new BsonInt64(Long.MAX_VALUE), new BsonInt64(-1));
        List<String> problems = new ArrayList<>();
        int n = 0;
        for (dev.consistencykit.logreconciliation.SeqAllocation allocation
                : dev.consistencykit.logreconciliation.SeqAllocation.values()) {
            Ledger ledger = Ledger.builder(db).seqAllocation(allocation).ledgerCollection("ledger" + allocation)
                    .accountsCollection("accounts" + allocation).archiveCollection("archive" + allocation)
                    .operationTimeout(java.time.Duration.ofSeconds(1)).build();
            ledger.ensureIndexes();
            MongoCollection<BsonDocument> accounts = db.getCollection("accounts" + allocation, BsonDocument.class);
            for (String field : List.of("seqId", "balance", "head", "checkpoint", "checkpoint.seqId")) {
                for (BsonValue v : odd) {
                    String account = "acct" + n++;
                    String what = allocation + " " + field + ": " + EmbeddedServerDifferentialTest.json(v);
                    try {
                        ledger.apply(LedgerTransaction.of(Change.credit(account, 10)));
                        accounts.updateOne(eq("_id", account), Updates.set(field, v));
                        ledger.apply(LedgerTransaction.of(Change.credit(account, 5)));
                        long balance = ledger.balance(account);
                        boolean trusted = (v.isInt32() || v.isInt64())
                                && (field.equals("balance") || v.asNumber().longValue() >= 0);
                        if (balance != 15 && !trusted) {
                            problems.add(what + ": balance " + balance);
                        }
                    } catch (ConsistencyException typed) {
                        // refused, typed
                    } catch (RuntimeException raw) {
                        problems.add(what + ": " + raw);
                    }
                }
            }
        }
        assertThat(problems).isEmpty();
    }
}
