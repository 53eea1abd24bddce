package dev.consistencykit.logreconciliation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;

/**
 * The ledger as a demanding user runs it, on one database: appender processes sending transfers and three-way splits
 * (appended, or applied in their own thread), cancelling them and retrying their ids; one committer process (now and
 * then recovering everything in flight, whatever its age); readers of consistent balances, reconciliations and a feed
 * of every account, all at once. Every process's driver calls fail at random (killed before or after a write, a
 * write's reply lost before or after it landed or after a pause, a write refused as conflicting, writes and reads
 * slowed), and a dead process is replaced by a fresh one that goes on where its predecessor's caller was; at the end a
 * fresh process recovers until nothing is pending. Then everything is checked on data read back, and every result a
 * process got is checked against it:
 * <ul>
 *   <li>every transaction committed (valid or canceled), none pending;</li>
 *   <li>each (account, seqId) held by one transaction, each account's numbers 1…n without a gap;</li>
 *   <li>no balance below the floor at any seqId, folding each account's valid changes in order;</li>
 *   <li>every recorded {@code cacheBal} and every account's cache equal to that fold; money conserved;</li>
 *   <li>what {@code apply} and {@code cancel} answered holds on the transaction read back;</li>
 *   <li>every consistent read of all balances summed to the money in the books; a live reconciliation reports no
 *       problem (a number reserved or left and not filled yet is in flight, not a problem);</li>
 *   <li>each feed delivered every account's changes once, in order, none skipped, each as the log holds it.</li>
 * </ul>
 */
final class LedgerChaos {

    static final long OPENING_BALANCE = 1_000;
    static final long FLOOR = 0;
    static final Duration STALE_AFTER = Duration.ofMillis(200);
    private static final Duration PROCESS_TIMEOUT = Duration.ofMinutes(2);
    private static final int FINAL_PASSES = 20;
    /** The pause between two passes of the committer. */
    private static final Duration PASS_INTERVAL = Duration.ofMillis(50);
    /** The pause between two rounds of a reader (each round reads every account several ways). */
    private static final Duration READ_INTERVAL = Duration.ofMillis(100);
    /** The longest a slowed call waits. */
    private static final Duration MAX_PAUSE = Duration.ofMillis(50);

    private final SeqAllocation allocation;
    private final int accounts;
    private final int appenders;
    private final int operationsPerAppender;
    private final int readers;

    /**
     * @param allocation            how appends number their changes
     * @param accounts              accounts {@code L0…}, each opened with {@link #OPENING_BALANCE}
     * @param appenders             appender processes at once
     * @param operationsPerAppender what each appender does in all, across its incarnations
     * @param readers               reader processes at once
     */
    LedgerChaos(SeqAllocation allocation, int accounts, int appenders, int operationsPerAppender, int readers) {
        this.allocation = allocation;
        this.accounts = accounts;
        this.appenders = appenders;
        this.operationsPerAppender = operationsPerAppender;
        this.readers = readers;
    }

    /** One run: its seed, what it did, and every violation found. */
    record Result(long seed, int operations, int processes, int crashes, int inFlight, Duration took,
                  Map<String, Long> counters, List<String> problems) {

        @Override
        public String toString() {
            return "seed " + seed + ": " + operations + " operations, " + processes + " processes, " + crashes
                    + " killed, " + inFlight + " applied in flight, " + took.toMillis() + " ms, " + counters
                    + (problems.isEmpty() ? "" : ", FAILED (" + problems.size() + "): "
                    + String.join("; ", problems.subList(0, Math.min(20, problems.size()))));
        }
    }

    Map<String, Long> opening() {
        Map<String, Long> opening = new LinkedHashMap<>();
        for (int i = 0; i < accounts; i++) {
            opening.put("L" + i, OPENING_BALANCE);
        }
        return opening;
    }

    Ledger ledger(MongoDatabase db) {
        return Books.ledger(db).seqAllocation(allocation).overdraftFloor(FLOOR).staleAfter(STALE_AFTER).build();
    }

    /** What the processes were told, gathered to be held against the data. */
    private static final class Journal {
        final Map<Object, LedgerTransaction> sent = new ConcurrentHashMap<>();
        /** Ids {@code apply} answered committed (valid) for. */
        final Map<Object, String> committed = new ConcurrentHashMap<>();
        /** Ids {@code apply} answered aborted (canceled) for. */
        final Map<Object, String> aborted = new ConcurrentHashMap<>();
        /** Ids a {@code cancel} call returned for: canceled. */
        final Map<Object, String> canceled = new ConcurrentHashMap<>();
        /** Ids a cancel was refused for as already decided: they count. */
        final Map<Object, String> decided = new ConcurrentHashMap<>();
        final List<String> problems = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger operations = new AtomicInteger();
        final AtomicInteger processes = new AtomicInteger();
        final AtomicInteger crashes = new AtomicInteger();
        /** Applies that came back in flight (an earlier number of an account not committed yet). */
        final AtomicInteger inFlight = new AtomicInteger();
        /**
         * Each reader's feed: its cursor and every entry it delivered, in order. One record per reader, registered at
         * once, so that the final drain appends a cursor's entries to its own reader's list (two lists, filled by two
         * readers starting together, paired a cursor with the other reader's entries).
         */
        final List<Feed> feeds = Collections.synchronizedList(new ArrayList<>());
        /** Every ledger a process built, for its counters. */
        final List<Ledger> ledgers = Collections.synchronizedList(new ArrayList<>());

        Ledger counted(Ledger ledger) {
            ledgers.add(ledger);
            return ledger;
        }

        /** The counters of every process's ledger, summed. */
        Map<String, Long> counters() {
            Map<String, Long> sums = new TreeMap<>();
            synchronized (ledgers) {
                ledgers.forEach(l -> l.counters().forEach((k, v) -> sums.merge(k, v, Long::sum)));
            }
            return sums;
        }
    }

    /** A reader's cursor and what it delivered, polled on to the end after the final recovery. */
    private record Feed(LedgerCursor cursor, List<LedgerEntry> delivered) {
    }

    Result run(long seed, MongoDatabase db) throws InterruptedException {
        Map<String, Long> opening = opening();
        long start = System.nanoTime();
        Books.seed(db, opening);
        ledger(db).ensureIndexes();
        Journal journal = new Journal();
        AtomicBoolean appending = new AtomicBoolean(true);
        ExecutorService executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "ledger-chaos");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> supervisors = new ArrayList<>();
            for (int a = 0; a < appenders; a++) {
                int appender = a;
                supervisors.add(executor.submit(() -> {
                    superviseAppender(seed, appender, db, executor, journal);
                    return null;
                }));
            }
            Future<?> committer = executor.submit(() -> {
                superviseCommitter(seed, db, executor, journal, appending);
                return null;
            });
            List<Future<?>> readerLoops = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                int reader = r;
                readerLoops.add(executor.submit(() -> {
                    read(seed, reader, db, journal, appending);
                    return null;
                }));
            }
            for (Future<?> f : supervisors) {
                await(f, "appender supervisor", journal);
            }
            appending.set(false);
            await(committer, "committer supervisor", journal);
            for (Future<?> f : readerLoops) {
                await(f, "reader", journal);
            }
            List<String> pending = recoverUntilNothingIsPending(db);
            journal.problems.addAll(pending);
            for (Feed feed : List.copyOf(journal.feeds)) {
                for (List<LedgerEntry> next = feed.cursor().poll(1_000); !next.isEmpty();
                     next = feed.cursor().poll(1_000)) {
                    feed.delivered().addAll(next);
                }
            }
            journal.problems.addAll(check(db, opening, journal));
            return new Result(seed, journal.operations.get(), journal.processes.get(), journal.crashes.get(),
                    journal.inFlight.get(), Duration.ofNanos(System.nanoTime() - start), journal.counters(),
                    List.copyOf(journal.problems));
        } finally {
            executor.shutdownNow();
            executor.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    // ---------------------------------------------------------------- processes

    private static FaultInjector faults(long seed) {
        return FaultInjector.weighted(seed, Map.of(FaultMode.CRASH_BEFORE, 0.01, FaultMode.CRASH_AFTER, 0.01,
                FaultMode.TRANSIENT_BEFORE, 0.02, FaultMode.TRANSIENT_AFTER, 0.02, FaultMode.PAUSE, 0.05,
                FaultMode.PAUSE_AFTER, 0.01, FaultMode.CONFLICT, 0.01), 0.05, MAX_PAUSE);
    }

    /** One appender's operations, process after process: a killed process's successor goes on with the next. */
    private void superviseAppender(long seed, int appender, MongoDatabase db, ExecutorService executor,
                                   Journal journal) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        List<LedgerTransaction> mine = Collections.synchronizedList(new ArrayList<>());
        for (int incarnation = 0; next.get() < operationsPerAppender; incarnation++) {
            FaultInjector injector = faults(mix(seed, appender, incarnation));
            MongoDatabase processDb = injector.wrap(db);
            journal.processes.incrementAndGet();
            Future<?> process = executor.submit(() -> {
                Ledger ledger = journal.counted(ledger(processDb));
                while (next.get() < operationsPerAppender) {
                    int sequence = next.getAndIncrement();
                    journal.operations.incrementAndGet();
                    int problems = journal.problems.size();
                    operate(ledger, appender, sequence, new Random(mix(seed, appender, 1_000_000L + sequence)),
                            mine, journal);
                    if (journal.problems.size() > problems) {
                        List<FaultInjector.InjectedFault> injected = injector.faults();
                        journal.problems.add("(appender " + appender + "'s process had made " + injector.writes()
                                + " writes; its last faults: " + injected.subList(Math.max(0, injected.size() - 6),
                                injected.size()) + ")");
                    }
                }
                return null;
            });
            if (!await(process, "appender " + appender, journal)) {
                return;
            }
        }
    }

    /** One operation: a new transfer or split appended or applied, a retry of an earlier id, or a cancel. */
    private void operate(Ledger ledger, int appender, int sequence, Random random, List<LedgerTransaction> mine,
                         Journal journal) {
        int pick = random.nextInt(100);
        LedgerTransaction tx;
        if (pick < 70 || mine.isEmpty()) {
            tx = newTransaction("op-" + appender + "-" + sequence, random);
            mine.add(tx);
            journal.sent.put(tx.id().value(), tx);
        } else {
            tx = mine.get(random.nextInt(mine.size()));
            if (pick >= 85) {
                Object id = tx.id().value();
                try {
                    ledger.cancel(tx.id());
                    journal.canceled.put(id, "cancel returned");
                } catch (UnknownTransactionException e) {
                    // never appended (its process died before the write): nothing to cancel
                } catch (TransactionCommittedException e) {
                    journal.decided.put(id, "cancel refused: decided");
                } catch (RuntimeException e) {
                    journal.problems.add("cancel of " + id + " failed: " + described(e));
                }
                return;
            }
        }
        try {
            if (random.nextBoolean()) {
                ledger.append(tx);
                return;
            }
            OperationResult result = ledger.apply(tx);
            switch (result.outcome()) {
                case COMMITTED -> journal.committed.put(tx.id().value(), "apply answered committed");
                case ABORTED -> journal.aborted.put(tx.id().value(), "apply answered aborted: " + result.reason());
                default -> journal.inFlight.incrementAndGet();   // an earlier number is not in the log yet
            }
        } catch (RuntimeException e) {
            journal.problems.add("append or apply of " + tx.id().value() + " failed: " + described(e));
        }
    }

    private LedgerTransaction newTransaction(String id, Random random) {
        int a = random.nextInt(accounts);
        int b = (a + 1 + random.nextInt(accounts - 1)) % accounts;
        long amount = 2L + random.nextInt(400);
        if (random.nextInt(4) == 0) {
            int c = (b + 1) % accounts == a ? (b + 2) % accounts : (b + 1) % accounts;
            return new LedgerTransaction(OperationId.of(id), List.of(Change.debit("L" + a, amount),
                    Change.credit("L" + b, amount / 2), Change.credit("L" + c, amount - amount / 2)), true);
        }
        return LedgerTransaction.transfer("L" + a, "L" + b, amount).withId(OperationId.of(id));
    }

    /**
     * The committer, process after process, until the appenders are done: a pass with the ledger's staleness, or now
     * and then one for everything in flight whatever its age (as {@code recover(Duration.ZERO)} at start-up is), which
     * meets the appenders' own commits and fills numbers whose appends are only slow.
     */
    private void superviseCommitter(long seed, MongoDatabase db, ExecutorService executor, Journal journal,
                                    AtomicBoolean appending) throws InterruptedException {
        for (int incarnation = 0; appending.get(); incarnation++) {
            MongoDatabase processDb = faults(mix(seed, 1_000, incarnation)).wrap(db);
            journal.processes.incrementAndGet();
            Random random = new Random(mix(seed, 1_001, incarnation));
            Future<?> process = executor.submit(() -> {
                Ledger ledger = journal.counted(ledger(processDb));
                while (appending.get()) {
                    try {
                        ledger.recover(random.nextInt(4) == 0 ? Duration.ZERO : STALE_AFTER);
                    } catch (RuntimeException e) {
                        journal.problems.add("committer pass failed: " + described(e));
                    }
                    TimeUnit.MILLISECONDS.sleep(PASS_INTERVAL.toMillis());
                }
                return null;
            });
            if (!await(process, "committer", journal)) {
                return;
            }
        }
    }

    /**
     * A reader: consistent reads of every balance (their sum is the money in the books), a reconciliation of one
     * account (no problem but a hole), and a feed of every account polled on; reads only, slowed at random.
     */
    private void read(long seed, int reader, MongoDatabase db, Journal journal, AtomicBoolean appending) {
        Random random = new Random(mix(seed, 2_000, reader));
        Ledger ledger = journal.counted(ledger(faults(mix(seed, 2_000, reader)).wrap(db)));
        LedgerCursor feed = ledger.cursorOverAll(Map.of());
        List<LedgerEntry> delivered = Collections.synchronizedList(new ArrayList<>());
        journal.feeds.add(new Feed(feed, delivered));
        List<String> names = new ArrayList<>(opening().keySet());
        long money = OPENING_BALANCE * accounts;
        try {
            while (appending.get()) {
                long sum = ledger.balances(names).values().stream().mapToLong(Long::longValue).sum();
                if (sum != money) {
                    journal.problems.add("reader " + reader + ": balances() summed to " + sum + " with " + money
                            + " in the books");
                }
                String account = names.get(random.nextInt(names.size()));
                for (String problem : ledger.reconcile(account, false).problems()) {
                    journal.problems.add("reader " + reader + ": live reconcile of " + account + ": " + problem);
                }
                delivered.addAll(feed.poll(50));
                TimeUnit.MILLISECONDS.sleep(READ_INTERVAL.toMillis());
            }
        } catch (RuntimeException e) {
            journal.problems.add("reader " + reader + " failed: " + described(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the process ended (normally, or killed: then it is replaced); a failure is a problem. */
    private static boolean await(Future<?> process, String what, Journal journal) throws InterruptedException {
        try {
            process.get(PROCESS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof InjectedCrash) {
                journal.crashes.incrementAndGet();
                return true;
            }
            journal.problems.add(what + " died: " + e.getCause());
            return false;
        } catch (TimeoutException e) {
            process.cancel(true);
            journal.problems.add(what + " did not end within " + PROCESS_TIMEOUT);
            return false;
        }
    }

    /** A fresh process recovers, pass after pass, until nothing is pending; what stays pending is a problem. */
    private List<String> recoverUntilNothingIsPending(MongoDatabase db) {
        Ledger ledger = ledger(db);
        List<String> problems = new ArrayList<>();
        for (int pass = 1; pass <= FINAL_PASSES; pass++) {
            try {
                ledger.recover(Duration.ZERO);
            } catch (RuntimeException e) {
                problems.add("final recovery pass " + pass + " failed: " + described(e));
            }
            if (db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).countDocuments(
                    Filters.ne("proc", "committed")) == 0) {
                return problems;
            }
        }
        problems.add("still pending after " + FINAL_PASSES + " recovery passes");
        return problems;
    }

    // ---------------------------------------------------------------- invariants

    /** A change of the log as read back, with its transaction. */
    private record Held(Object tx, boolean valid, long value, Long cacheBal) {
    }

    private List<String> check(MongoDatabase db, Map<String, Long> opening, Journal journal) {
        List<String> problems = new ArrayList<>();
        Map<String, NavigableMap<Long, Held>> logs = new HashMap<>();
        opening.keySet().forEach(a -> logs.put(a, new TreeMap<>()));
        Map<Object, Document> byId = new HashMap<>();
        for (Document tx : db.getCollection(LedgerConfig.DEFAULT_LEDGER_COLLECTION).find()) {
            Object id = tx.get("_id");
            byId.put(id, tx);
            if (!"committed".equals(tx.getString("proc"))) {
                problems.add("transaction " + id + " is " + tx.get("proc") + " after recovery");
            }
            boolean valid = "valid".equals(tx.getString("state"));
            if (!(id instanceof String s && s.startsWith("gap:")) && !journal.sent.containsKey(id)) {
                problems.add("transaction " + id + " is in the log, and no appender sent it");
            }
            for (Document c : tx.getList("changes", Document.class)) {
                String account = c.getString("account");
                long seq = c.getLong("seqId");
                Held previous = logs.computeIfAbsent(account, k -> new TreeMap<>()).put(seq,
                        new Held(id, valid, c.getLong("value"), c.getLong("cacheBal")));
                if (previous != null) {
                    problems.add("seqId " + seq + " of " + account + " is held by " + previous.tx() + " and " + id);
                }
            }
        }
        long total = 0;
        for (Map.Entry<String, NavigableMap<Long, Held>> log : logs.entrySet()) {
            String account = log.getKey();
            long running = opening.getOrDefault(account, 0L);
            long expected = 1;
            for (Map.Entry<Long, Held> e : log.getValue().entrySet()) {
                long seq = e.getKey();
                Held held = e.getValue();
                if (seq != expected) {
                    problems.add(account + ": seqIds " + expected + "…" + (seq - 1) + " are missing");
                }
                expected = seq + 1;
                if (held.valid()) {
                    running += held.value();
                    if (running < FLOOR) {
                        problems.add(account + ": the balance after seqId " + seq + " (" + held.tx() + ") is "
                                + running + ", below the floor " + FLOOR);
                    }
                }
                if (held.cacheBal() == null || held.cacheBal() != running) {
                    problems.add(account + ": " + held.tx() + " records cacheBal " + held.cacheBal() + " at seqId "
                            + seq + "; the log folds to " + running);
                }
            }
            Document cache = db.getCollection(LedgerConfig.DEFAULT_ACCOUNTS_COLLECTION).find(
                    Filters.eq("_id", account)).first();
            long cacheSeq = cache == null ? 0 : cache.getLong("seqId");
            long cacheBalance = cache == null ? 0 : cache.getLong("balance");
            if (cacheSeq != expected - 1 || cacheBalance != running) {
                problems.add(account + ": the cache holds " + cacheBalance + " at seqId " + cacheSeq + "; the log "
                        + "folds to " + running + " at " + (expected - 1));
            }
            total += running;
        }
        long money = OPENING_BALANCE * accounts;
        if (total != money) {
            problems.add("money not conserved: the accounts hold " + total + " of " + money);
        }
        checkAnswers(byId, journal, problems);
        checkFeeds(logs, journal, problems);
        // and as the ledger's own reads see them: reconcile, balance() and the holes it finds
        problems.addAll(Books.invariants(db, opening, true, FLOOR));
        return problems;
    }

    /** What apply and cancel answered, held against each transaction read back. */
    private static void checkAnswers(Map<Object, Document> byId, Journal journal, List<String> problems) {
        journal.committed.forEach((id, said) -> {
            Document tx = byId.get(id);
            if (tx == null || !"valid".equals(tx.getString("state"))) {
                problems.add(id + ": " + said + ", and it is " + (tx == null ? "not in the log" : tx.get("state")));
            }
        });
        journal.decided.forEach((id, said) -> {
            Document tx = byId.get(id);
            if (tx == null || !"valid".equals(tx.getString("state"))) {
                problems.add(id + ": " + said + ", and it is " + (tx == null ? "not in the log" : tx.get("state")));
            }
        });
        journal.aborted.forEach((id, said) -> {
            Document tx = byId.get(id);
            if (tx == null || !"canceled".equals(tx.getString("state"))) {
                problems.add(id + ": " + said + ", and it is " + (tx == null ? "not in the log" : tx.get("state")));
            }
        });
        journal.canceled.forEach((id, said) -> {
            Document tx = byId.get(id);
            if (tx == null || !"canceled".equals(tx.getString("state"))) {
                problems.add(id + ": " + said + ", and it is " + (tx == null ? "not in the log" : tx.get("state")));
            }
        });
    }

    /** Each feed: every account's changes in order from 1, none twice, none skipped, each as the log holds it. */
    private static void checkFeeds(Map<String, NavigableMap<Long, Held>> logs, Journal journal, List<String> problems) {
        synchronized (journal.feeds) {
            for (int r = 0; r < journal.feeds.size(); r++) {
                Map<String, Long> last = new HashMap<>();
                int reader = r;
                List<LedgerEntry> feed = journal.feeds.get(r).delivered();
                for (LedgerEntry e : feed) {
                    long previous = last.getOrDefault(e.account(), 0L);
                    if (e.seqId() != previous + 1) {
                        problems.add("feed " + r + " delivered seqId " + e.seqId() + " of " + e.account()
                                + " after " + previous);
                    }
                    last.put(e.account(), e.seqId());
                    Held held = logs.getOrDefault(e.account(), new TreeMap<>()).get(e.seqId());
                    if (held == null || !held.tx().equals(e.transactionId().value()) || held.valid() != e.valid()
                            || Math.abs(held.value()) != e.value() || held.cacheBal() == null
                            || held.cacheBal() != e.cacheBal()) {
                        problems.add("feed " + r + " delivered " + e + "; the log holds " + held);
                    }
                }
                logs.forEach((account, log) -> {
                    long head = log.isEmpty() ? 0 : log.lastKey();
                    if (last.getOrDefault(account, 0L) != head) {
                        problems.add("feed of reader " + reader + " ended at seqId " + last.getOrDefault(account, 0L)
                                + " of " + account + ", whose log ends at " + head);
                    }
                });
            }
        }
    }

    /** An exception with its causes, each on the same line. */
    private static String described(Throwable e) {
        StringBuilder out = new StringBuilder(e.toString());
        for (Throwable cause = e.getCause(); cause != null && out.length() < 2_000; cause = cause.getCause()) {
            out.append(", caused by ").append(cause);
        }
        return out.toString();
    }

    static long mix(long seed, long a, long b) {
        long h = seed * 0x9E3779B97F4A7C15L + a * 0xC2B2AE3D27D4EB4FL + b * 0x165667B19E3779F9L;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return h;
    }
}
