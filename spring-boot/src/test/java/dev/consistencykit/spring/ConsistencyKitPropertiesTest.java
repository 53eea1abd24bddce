package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.consistencykit.core.Maintenance;
import dev.consistencykit.core.spi.PatternRegistry;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.twophase.TwoPhaseCommit;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.versioning.Retention;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Every property, each read back from the bean it configures: the settings every instance shares, then each
 * pattern's own, then the application-wide ones. A setting left out keeps the pattern's default.
 */
class ConsistencyKitPropertiesTest {

    private String database;

    private ApplicationContextRunner runner() {
        return TestContexts.runner(database).withPropertyValues("consistency-kit.maintenance.enabled=false");
    }

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("props");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    @Test
    void shouldApplyTheSettingsEveryInstanceShares() {
        for (String pattern : List.of("two-phase", "job-queue", "sync-flag", "ledger", "versioning")) {
            String p = "consistency-kit." + pattern + ".x.";
            String sync = "consistency-kit.sync-flag.x.";
            runner().withPropertyValues(p + "name=named-" + pattern, p + "operation-timeout=11s",
                            p + "retry-policy.max-attempts=2", p + "retry-policy.initial-backoff=20ms",
                            p + "retry-policy.max-backoff=2s", p + "retry-policy.multiplier=3",
                            p + "retry-policy.jitter=0.25", p + "stale-after=42s")
                    .withPropertyValues(!"sync-flag".equals(pattern) ? new String[0] : new String[] {
                            sync + "master-collection=users", sync + "master-fields=name",
                            sync + "targets[0].collection=comments", sync + "targets[0].id-field=authorId",
                            sync + "targets[0].copies.name=authorName"})
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        dev.consistencykit.core.ConsistencyStrategy<?> instance = context.getBean("x",
                                dev.consistencykit.core.ConsistencyStrategy.class);
                        assertThat(instance.name()).isEqualTo("named-" + pattern);
                        dev.consistencykit.core.StrategyConfig config = config(instance);
                        assertThat(config.operationTimeout()).as(pattern).isEqualTo(Duration.ofSeconds(11));
                        assertThat(config.retryPolicy()).as(pattern).isEqualTo(new dev.consistencykit.core.RetryPolicy(2,
                                Duration.ofMillis(20), Duration.ofSeconds(2), 3.0, 0.25));
                        assertThat(config.staleAfter()).as(pattern).isEqualTo(Duration.ofSeconds(42));
                    });
        }
    }

    private static dev.consistencykit.core.StrategyConfig config(Object instance) {
        if (instance instanceof TwoPhaseCommit i) {
            return i.config();
        }
        if (instance instanceof JobQueue i) {
            return i.config();
        }
        if (instance instanceof SyncFlag i) {
            return i.config();
        }
        if (instance instanceof Ledger i) {
            return i.config();
        }
        return ((VersionedStore) instance).config();
    }

    @Test
    void shouldApplyEveryTwoPhaseProperty() {
        runner().withPropertyValues("consistency-kit.two-phase.payments.transactions-collection=txs",
                        "consistency-kit.two-phase.payments.accounts-collection=wallets",
                        "consistency-kit.two-phase.payments.balance-field=cents",
                        "consistency-kit.two-phase.payments.lease=7s",
                        "consistency-kit.two-phase.payments.retention=3d",
                        "consistency-kit.two-phase.payments.max-pending-per-document=9")
                .run(context -> {
                    TwoPhaseConfig c = context.getBean(TwoPhaseCommit.class).config();
                    assertThat(c.transactionsCollection()).isEqualTo("txs");
                    assertThat(c.accountsCollection()).isEqualTo("wallets");
                    assertThat(c.balanceField()).isEqualTo("cents");
                    assertThat(c.lease()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(c.retention()).isEqualTo(Duration.ofDays(3));
                    assertThat(c.maxPendingPerDocument()).isEqualTo(9);
                });
        runner().withPropertyValues("consistency-kit.two-phase.payments.name=payments").run(context -> assertThat(
                context.getBean(TwoPhaseCommit.class).config()).as("defaults").isEqualTo(TwoPhaseCommit.builder(
                        context.getBean(ConsistencyKitDatabase.class).database()).name("payments").build().config()));
    }

    @Test
    void shouldApplyEveryJobQueueProperty() {
        runner().withPropertyValues("consistency-kit.job-queue.mail.collection=work",
                        "consistency-kit.job-queue.mail.max-attempts=3",
                        "consistency-kit.job-queue.mail.lease=20s",
                        "consistency-kit.job-queue.mail.retention=2h",
                        "consistency-kit.job-queue.mail.workers=1",
                        "consistency-kit.job-queue.mail.shutdown-grace=3s",
                        "consistency-kit.job-queue.mail.outbox-collections=orders,carts",
                        "consistency-kit.job-queue.mail.relay-every=2s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    JobQueue queue = context.getBean(JobQueue.class);
                    assertThat(queue.config().collection()).isEqualTo("work");
                    assertThat(queue.config().maxAttempts()).isEqualTo(3);
                    assertThat(queue.config().lease()).isEqualTo(Duration.ofSeconds(20));
                    assertThat(queue.config().retention()).isEqualTo(Duration.ofHours(2));
                    ConsistencyKitProperties.JobQueue p = context.getBean(ConsistencyKitProperties.class)
                            .getJobQueue().get("mail");
                    assertThat(p.getWorkers()).isEqualTo(1);
                    assertThat(p.getShutdownGrace()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(p.getRelayEvery()).isEqualTo(Duration.ofSeconds(2));
                    // each outbox collection has its index, created on start
                    for (String collection : List.of("orders", "carts")) {
                        assertThat(context.getBean(ConsistencyKitDatabase.class).database().getCollection(collection)
                                .listIndexes().map(i -> i.getString("name")).into(new java.util.ArrayList<>()))
                                .as(collection).contains("job_outbox", "jobOutboxReserved_operation");
                    }
                });
    }

    @Test
    void shouldRelayEachOutboxCollectionInMaintenance() {
        TestContexts.runner(database).withPropertyValues("consistency-kit.job-queue.mail.outbox-collections=orders",
                        "consistency-kit.job-queue.mail.relay-every=1s")
                .withBean("mail-handler", dev.consistencykit.jobqueue.JobHandler.class, () -> ctx -> { })
                .run(context -> {
                    Maintenance maintenance = context.getBean(ConsistencyKitLifecycle.class).maintenance();
                    assertThat(maintenance.health()).extracting(Maintenance.StepHealth::name)
                            .contains("mail relay orders");
                });
    }

    @Test
    void shouldApplyEverySyncFlagProperty() {
        runner().withPropertyValues("consistency-kit.sync-flag.users.master-collection=people",
                        "consistency-kit.sync-flag.users.master-fields=name,avatar",
                        "consistency-kit.sync-flag.users.targets[0].collection=comments",
                        "consistency-kit.sync-flag.users.targets[0].id-field=authorId",
                        "consistency-kit.sync-flag.users.targets[0].copies.name=authorName",
                        "consistency-kit.sync-flag.users.targets[1].collection=teams",
                        "consistency-kit.sync-flag.users.targets[1].id-field=id",
                        "consistency-kit.sync-flag.users.targets[1].array-field=members",
                        "consistency-kit.sync-flag.users.targets[1].version-field=memberVersion",
                        "consistency-kit.sync-flag.users.targets[1].copies.avatar=avatar")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SyncFlag flag = context.getBean(SyncFlag.class);
                    assertThat(flag.config().masterCollection()).isEqualTo("people");
                    assertThat(flag.config().masterFields()).containsExactly("name", "avatar");
                    List<SyncTarget> targets = flag.config().targets();
                    assertThat(targets).hasSize(2);
                    assertThat(targets.get(0).collection()).isEqualTo("comments");
                    assertThat(targets.get(0).idField()).isEqualTo("authorId");
                    assertThat(targets.get(0).copies()).isEqualTo(Map.of("name", "authorName"));
                    assertThat(targets.get(1).arrayField()).isEqualTo(Optional.of("members"));
                    assertThat(targets.get(1).versionField()).isEqualTo("memberVersion");
                });
    }

    @Test
    void shouldApplyEveryLedgerAndVersioningProperty() {
        runner().withPropertyValues("consistency-kit.ledger.books.ledger-collection=entries",
                        "consistency-kit.ledger.books.accounts-collection=balances",
                        "consistency-kit.ledger.books.archive-collection=old",
                        "consistency-kit.ledger.books.overdraft-floor=-500",
                        "consistency-kit.versioning.catalogue.roots-collection=r",
                        "consistency-kit.versioning.catalogue.items-collection=i",
                        "consistency-kit.versioning.catalogue.history-collection=h",
                        "consistency-kit.versioning.catalogue.keep-last=4")
                .run(context -> {
                    Ledger ledger = context.getBean(Ledger.class);
                    assertThat(List.of(ledger.config().ledgerCollection(), ledger.config().accountsCollection(),
                            ledger.config().archiveCollection())).containsExactly("entries", "balances", "old");
                    assertThat(ledger.config().overdraftFloor()).hasValue(-500);
                    VersionedStore store = context.getBean(VersionedStore.class);
                    assertThat(List.of(store.config().rootsCollection(), store.config().itemsCollection(),
                            store.config().historyCollection())).containsExactly("r", "i", "h");
                    assertThat(store.config().retention()).isEqualTo(Retention.keepLast(4));
                });
        runner().withPropertyValues("consistency-kit.versioning.catalogue.keep-newer-than=7d")
                .run(context -> assertThat(context.getBean(VersionedStore.class).config().retention())
                        .isEqualTo(Retention.newerThan(Duration.ofDays(7))));
        runner().withPropertyValues("consistency-kit.versioning.catalogue.keep-newer-than=7d",
                "consistency-kit.versioning.catalogue.keep-last=4").run(context -> assertThat(context)
                        .getFailure().rootCause().hasMessageContaining("keepLast or newerThan, not both"));
    }

    @Test
    void shouldApplyTheApplicationWideProperties() {
        TestContexts.runner(database).withPropertyValues("consistency-kit.ensure-indexes=false",
                        "consistency-kit.maintenance.enabled=false",
                        "consistency-kit.maintenance.shutdown-grace=2s",
                        "consistency-kit.health.interrupted-after=90s",
                        "consistency-kit.ledger.books.name=books")
                .run(context -> {
                    ConsistencyKitProperties p = context.getBean(ConsistencyKitProperties.class);
                    assertThat(p.getMaintenance().getShutdownGrace()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(p.getHealth().getInterruptedAfter()).isEqualTo(Duration.ofSeconds(90));
                    assertThat(context.getBean(ConsistencyKitLifecycle.class).maintenance()).as("maintenance off")
                            .isNull();
                    assertThat(PatternRegistry.registered(context.getBean(ConsistencyKitDatabase.class).database()))
                            .as("no indexes").isEmpty();
                    assertThat(context.getBean(ConsistencyKitDatabase.class).database().getName())
                            .as("consistency-kit.database").isEqualTo(database);
                });
    }

    @Test
    void shouldRefuseOneKeyDeclaredForTwoPatterns() {
        runner().withPropertyValues("consistency-kit.ledger.books.name=a", "consistency-kit.versioning.books.name=b")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("'books'").hasMessageContaining("unique"));
    }
}
