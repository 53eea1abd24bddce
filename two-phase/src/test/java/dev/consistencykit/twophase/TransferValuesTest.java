package dev.consistencykit.twophase;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.bson.Document;
import org.bson.types.Decimal128;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A transfer of 100 over accounts whose balance holds every kind of value a document may hold, on either side and in
 * both variants: it commits, moving exactly 100, or it is canceled with a typed reason before anything moved (the
 * database as it was), never a raw server error, never a commit stuck after a debit. A balance that is an array
 * satisfies a comparison by one of its elements, NaN and the infinities compare differently on different servers and
 * an {@code $inc} does not change them: the guards refuse them before the decision.
 */
@ExtendWith(MongoTestExtension.class)
class TransferValuesTest {

    private static final long AMOUNT = 100;

    /** What a balance may hold that the transfer cannot move money through, on either side. */
    private static final List<Object> REFUSED = Arrays.asList(List.of(5_000, 50), List.of(500, 50), List.of(),
            List.of(List.of(5_000)), Double.NaN, Decimal128.NaN, Decimal128.NEGATIVE_NaN, Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY, Decimal128.POSITIVE_INFINITY, Decimal128.NEGATIVE_INFINITY, "5000",
            new Document("v", 5_000), true, null);

    /** Decimals the addition of 100 cannot represent in 34 digits (MongoDB would round the sum). */
    private static final List<Object> INEXACT = List.of(
            new Decimal128(new BigDecimal("9999999999.999999999999999999999999")),
            new Decimal128(new BigDecimal("0.0000000000000000000000000000000001")));

    @ParameterizedTest
    @EnumSource(TransferVariant.class)
    void shouldCancelWithNothingMovedWhenABalanceIsNoPlainNumber(TransferVariant variant, MongoDatabase db) {
        MongoCollection<Document> accounts = db.getCollection(Bank.ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, variant);
        List<String> problems = new ArrayList<>();
        int n = 0;
        for (String side : List.of("from", "to")) {
            for (Object value : side.equals("from") ? REFUSED : concat(REFUSED, INEXACT)) {
                String from = "a" + n;
                String to = "b" + n;
                String id = "t" + n++;
                accounts.insertOne(new Document("_id", from).append("balance", side.equals("from") ? value : 1_000L));
                accounts.insertOne(new Document("_id", to).append("balance", side.equals("to") ? value : 1_000L));
                List<String> before = accounts(db, from, to);
                String what = side + " balance " + Values.show(value) + ": ";
                try {
                    tpc.transfer(Transfer.of(OperationId.of(id), from, to, AMOUNT));
                    problems.add(what + "committed");
                } catch (TransactionCanceledException e) {
                    if (!e.participant().equals("accounts/" + (side.equals("from") ? from : to))) {
                        problems.add(what + "canceled for " + e.participant() + ": " + e.getMessage());
                    }
                } catch (RuntimeException e) {
                    problems.add(what + e);
                }
                if (!accounts(db, from, to).equals(before)) {
                    problems.add(what + "the accounts changed: " + before + " -> " + accounts(db, from, to));
                }
                Document tx = db.getCollection(Bank.TRANSACTIONS).find(eq("_id", id)).first();
                if (tx == null || !"canceled".equals(tx.getString("state"))) {
                    problems.add(what + "the transaction is " + (tx == null ? "missing" : tx.getString("state")));
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    /** A balance a nested path reaches through an array, on the destination and on the source. */
    @ParameterizedTest(name = "{0}: {1} balance through an array")
    @MethodSource("sides")
    void shouldCancelWhenTheBalancePathGoesThroughAnArray(TransferVariant variant, String side, MongoDatabase db) {
        MongoCollection<Document> accounts = db.getCollection(Bank.ACCOUNTS);
        Document plain = new Document("amount", 1_000L);
        Object through = List.of(new Document("amount", 5_000L), new Document("amount", 50L));
        accounts.insertOne(new Document("_id", "a").append("w", side.equals("from") ? through : plain));
        accounts.insertOne(new Document("_id", "b").append("w", side.equals("to") ? through : plain));
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).transferVariant(variant).balanceField("w.amount")
                .retryPolicy(TestPolicies.FAST_RETRY).build();
        tpc.ensureIndexes();
        List<String> before = accounts(db, "a", "b");

        assertThatThrownBy(() -> tpc.transfer(Transfer.of(OperationId.of("t1"), "a", "b", AMOUNT)))
                .isInstanceOf(PreconditionFailedException.class)
                .hasMessageContaining("holds an array");

        assertThat(accounts(db, "a", "b")).isEqualTo(before);
    }

    static Stream<Arguments> sides() {
        return Stream.of(TransferVariant.values())
                .flatMap(v -> Stream.of(Arguments.of(v, "from"), Arguments.of(v, "to")));
    }

    /** Every numeric type, finite, on either side: the transfer commits and moves exactly 100, or finds no funds. */
    @ParameterizedTest
    @EnumSource(TransferVariant.class)
    void shouldMoveExactlyTheAmountWhateverNumberABalanceHolds(TransferVariant variant, MongoDatabase db) {
        List<Object> plain = List.of(1_000, 1_000L, 1_000.5, -0.0, new Decimal128(new BigDecimal("1000.25")),
                Decimal128.NEGATIVE_ZERO, (1L << 53) + 1, Long.MIN_VALUE + 1);
        MongoCollection<Document> accounts = db.getCollection(Bank.ACCOUNTS);
        TwoPhaseCommit tpc = tpc(db, variant);
        List<String> problems = new ArrayList<>();
        int n = 0;
        for (String side : List.of("from", "to")) {
            for (Object value : plain) {
                String from = "a" + n;
                String to = "b" + n;
                String id = "t" + n++;
                Object fromHeld = side.equals("from") ? value : 1_000L;
                Object toHeld = side.equals("to") ? value : 1_000L;
                accounts.insertOne(new Document("_id", from).append("balance", fromHeld));
                accounts.insertOne(new Document("_id", to).append("balance", toHeld));
                List<String> before = accounts(db, from, to);
                String what = side + " balance " + Values.show(value) + ": ";
                boolean funded = decimal(fromHeld).compareTo(BigDecimal.valueOf(AMOUNT)) >= 0;
                try {
                    tpc.transfer(Transfer.of(OperationId.of(id), from, to, AMOUNT));
                    if (!funded) {
                        problems.add(what + "committed without funds");
                    }
                    BigDecimal debited = decimal(fromHeld).subtract(decimal(balance(accounts, from)));
                    BigDecimal credited = decimal(balance(accounts, to)).subtract(decimal(toHeld));
                    if (debited.compareTo(BigDecimal.valueOf(AMOUNT)) != 0
                            || credited.compareTo(BigDecimal.valueOf(AMOUNT)) != 0) {
                        problems.add(what + "debited " + debited + ", credited " + credited);
                    }
                } catch (TransactionCanceledException e) {
                    // without funds: insufficient funds, or the debit's overflow at the bottom of the long range
                    if (funded) {
                        problems.add(what + e.getMessage());
                    }
                    if (!accounts(db, from, to).equals(before)) {
                        problems.add(what + "the accounts changed: " + before + " -> " + accounts(db, from, to));
                    }
                } catch (RuntimeException e) {
                    problems.add(what + e);
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    private static List<Object> concat(List<Object> a, List<Object> b) {
        List<Object> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static Object balance(MongoCollection<Document> accounts, String id) {
        return accounts.find(eq("_id", id)).first().get("balance");
    }

    /** The accounts as stored, byte for byte in their extended JSON: types, field order, NaN and signed zeros. */
    private static List<String> accounts(MongoDatabase db, String... ids) {
        List<String> out = new ArrayList<>();
        db.getCollection(Bank.ACCOUNTS, org.bson.BsonDocument.class).find(in("_id", List.of(ids)))
                .sort(new Document("_id", 1)).forEach(d -> out.add(d.toJson()));
        return out;
    }

    private static BigDecimal decimal(Object number) {
        if (Decimal128.NEGATIVE_ZERO.equals(number)) {
            return BigDecimal.ZERO;
        }
        return number instanceof Decimal128 d ? d.bigDecimalValue()
                : number instanceof Double d ? BigDecimal.valueOf(d) : BigDecimal.valueOf(((Number) number).longValue());
    }

    private static TwoPhaseCommit tpc(MongoDatabase db, TransferVariant variant) {
        TwoPhaseCommit tpc = TwoPhaseCommit.builder(db).transferVariant(variant).retryPolicy(TestPolicies.FAST_RETRY)
                .build();
        tpc.ensureIndexes();
        return tpc;
    }
}
