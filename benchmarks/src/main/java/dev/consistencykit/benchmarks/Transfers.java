package dev.consistencykit.benchmarks;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;

/**
 * The two-phase workload: a transfer of 1 to 5 between two random accounts, refused if the source cannot cover it;
 * every account opens with {@value #OPENING}, so none runs dry and the total never changes.
 */
final class Transfers {

    static final long OPENING = 1_000_000L;
    static final String ACCOUNTS = "accounts";

    private Transfers() {
    }

    static long total(MongoDatabase db) {
        Document sum = db.getCollection(ACCOUNTS).aggregate(List.of(
                Aggregates.group(null, Accumulators.sum("total", "$balance"), Accumulators.sum("n", 1)))).first();
        return sum == null ? 0 : ((Number) sum.get("total")).longValue();
    }

    static void seed(MongoDatabase db, int accounts) {
        db.drop();
        Fill.insert(db.getCollection(ACCOUNTS), accounts, i -> new Document("_id", "a" + i).append("balance", OPENING));
    }

    static List<String> checkTotal(MongoDatabase db, int accounts) {
        long total = total(db);
        long expected = accounts * OPENING;
        return total == expected ? List.of()
                : List.of("the balances add up to " + total + ", not " + expected);
    }

    /** consistency-kit's two-phase commit. */
    static final class Ours implements Side {

        private final MongoDatabase db;
        private TwoPhaseCommit tpc;
        private int accounts;

        Ours(MongoClient client) {
            this.db = client.getDatabase("peers_two_phase");
        }

        @Override
        public String name() {
            return "consistency-kit two-phase";
        }

        /** The records and the accounts on {@code _id}: every write of a transfer goes by {@code _id}. */
        @Override
        public Map<String, String> shardKeys() {
            return Map.of(TwoPhaseConfig.DEFAULT_TRANSACTIONS_COLLECTION, "_id", ACCOUNTS, "_id");
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            seed(db, documents);
            tpc = TwoPhaseCommit.builder(db).accountsCollection(ACCOUNTS).balanceField("balance").build();
            tpc.ensureIndexes();
            accounts = documents;
        }

        @Override
        public Phase run(int callers, Duration duration) {
            return ClosedLoop.run(callers, duration, (caller, n, random) -> {
                int[] p = Fill.pair(random, accounts);
                tpc.transfer(Transfer.of(OperationId.random(), "a" + p[0], "a" + p[1], 1 + random.nextInt(5)));
            });
        }

        @Override
        public List<String> check() {
            List<String> problems = new ArrayList<>(checkTotal(db, accounts));
            long pending = db.getCollection(ACCOUNTS).countDocuments(com.mongodb.client.model.Filters.exists(
                    "pendingTransactions.0"));
            if (pending > 0) {
                problems.add(pending + " accounts still name a pending transaction");
            }
            return problems;
        }

        @Override
        public List<String> notes() {
            int longest = 0;
            for (Document account : db.getCollection(ACCOUNTS).find(com.mongodb.client.model.Filters.or(
                    com.mongodb.client.model.Filters.exists("pendingTransactions"),
                    com.mongodb.client.model.Filters.exists("reservedTransactions")))) {
                longest = Math.max(longest, account.getList("pendingTransactions", Object.class, List.of()).size()
                        + account.getList("reservedTransactions", Object.class, List.of()).size());
            }
            return List.of("longest marker list left on an account: " + longest);
        }

        @Override
        public void close() {
            // the client is the harness's
        }
    }

    /**
     * MongoDB's own multi-document transactions ({@code withTransaction}): the floor a replica set gives, where the
     * server has them.
     */
    static final class Native implements Side {

        private final MongoClient client;
        private final MongoDatabase db;
        private int accounts;

        Native(MongoClient client) {
            this.client = client;
            this.db = client.getDatabase("peers_native_transactions");
        }

        @Override
        public String name() {
            return "MongoDB transactions (withTransaction)";
        }

        /** The accounts on {@code _id}, as ours: a transaction spans the two shards of its accounts. */
        @Override
        public Map<String, String> shardKeys() {
            return Map.of(ACCOUNTS, "_id");
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            seed(db, documents);
            accounts = documents;
            try (ClientSession session = client.startSession()) {
                transfer(session, "a0", "a1", 1);
                transfer(session, "a1", "a0", 1);
            } catch (RuntimeException e) {
                throw new SideUnavailableException("a transaction failed: " + Failures.describe(e), e);
            }
        }

        private void transfer(ClientSession session, String from, String to, long amount) {
            MongoCollection<Document> accountsCollection = db.getCollection(ACCOUNTS);
            session.withTransaction(() -> {
                if (accountsCollection.updateOne(session, and(eq("_id", from), gte("balance", amount)),
                        Updates.inc("balance", -amount)).getModifiedCount() != 1) {
                    throw new IllegalStateException("insufficient funds in " + from);
                }
                accountsCollection.updateOne(session, eq("_id", to), Updates.inc("balance", amount));
                return null;
            });
        }

        @Override
        public Phase run(int callers, Duration duration) {
            return ClosedLoop.run(callers, duration, (caller, n, random) -> {
                int[] p = Fill.pair(random, accounts);
                try (ClientSession session = client.startSession()) {
                    transfer(session, "a" + p[0], "a" + p[1], 1 + random.nextInt(5));
                }
            });
        }

        @Override
        public List<String> check() {
            return checkTotal(db, accounts);
        }

        @Override
        public void close() {
            // the client is the harness's
        }
    }
}
