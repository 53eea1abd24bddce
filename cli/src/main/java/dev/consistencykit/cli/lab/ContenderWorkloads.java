package dev.consistencykit.cli.lab;

import static com.mongodb.client.model.Filters.eq;

import java.util.List;
import java.util.Random;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.Accounts;
import dev.consistencykit.twophase.TwoPhaseConfig;

/** The comparison's two workloads, as every contender shares them: the bank of transfers and the rename. */
final class ContenderWorkloads {

    private ContenderWorkloads() {
    }

    /** Accounts of the bank-transfer workload. */
    static final int ACCOUNTS = 10;
    /** Each account's opening balance, in cents. */
    static final long OPENING = 10_000;
    static final long TOTAL = ACCOUNTS * OPENING;
    static final String BANK = TwoPhaseConfig.DEFAULT_ACCOUNTS_COLLECTION;
    static final List<String> ACCOUNT_IDS = java.util.stream.IntStream.range(0, ACCOUNTS)
            .mapToObj(i -> "a" + i).toList();
    static final String QUEUE_HAS_NO_CONSISTENT_READ = "a job's effects appear one document at a time until"
            + " it is done, and the queue offers no read that waits for them";

    /** The rename workload's users, each with 5 comments carrying her name. */
    static final int RENAMED_USERS = 10;

    /** Reads a master, then its comments: consistent when every comment shows the master's name. */
    static boolean copiesMatchMaster(MongoDatabase db, Random random) {
        String user = "u" + random.nextInt(RENAMED_USERS);
        String name = db.getCollection("users").find(eq("_id", user)).first().getString("name");
        for (Document c : db.getCollection("comments").find(eq("authorId", user))) {
            if (!name.equals(c.getString("authorName"))) {
                return false;
            }
        }
        return true;
    }

    static int[] pair(Random random) {
        int a = random.nextInt(ACCOUNTS);
        return new int[] {a, (a + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS};
    }

    static long amount(Random random) {
        return 1L + random.nextInt(500);
    }

    /** Sums every account in one query. */
    static boolean bankSumIsTotal(MongoDatabase db) {
        long sum = 0;
        for (Document a : db.getCollection(BANK).find()) {
            sum += ((Number) a.get(Accounts.BALANCE)).longValue();
        }
        return sum == TOTAL;
    }
}
