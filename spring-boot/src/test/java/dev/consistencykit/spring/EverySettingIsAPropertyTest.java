package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.consistencykit.core.StrategyConfig;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.logreconciliation.Ledger;
import dev.consistencykit.syncflag.SyncFlag;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.versioning.VersionedStore;

/**
 * Every setting of every pattern is a Spring property, enumerated from the configurations themselves: each field of a
 * pattern's configuration is set through its instance's properties to a value other than its default, and read back
 * from the bean's configuration. A setting added to a configuration is in this test at once; one that is not a plain
 * value must be named below, with the properties {@link InstanceBuilders} binds it from.
 */
class EverySettingIsAPropertyTest {

    /** The settings that are not one plain value, and the properties that set them. */
    private static final Map<String, String> BY_HAND = Map.of(
            "retryPolicy", "retry-policy.max-attempts, initial-backoff, max-backoff, multiplier, jitter (every pattern)",
            "clock", "the application's java.time.Clock bean, if it has one (every pattern)",
            "masterCollection", "master-collection (sync flag)", "masterFields", "master-fields (sync flag)",
            "targets", "targets[i].collection, id-field, array-field, version-field, copies (sync flag)",
            "retention", "keep-last or keep-newer-than (versioning)");

    private String database;

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("settings");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    static Stream<Arguments> patterns() {
        return InstanceBuilders.KINDS.stream().map(k -> Arguments.of(k.key(), k.builderType(), k.configType()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("patterns")
    void shouldBindEverySettingFromItsProperty(String pattern, Class<?> builder,
                                               Class<? extends StrategyConfig> configType) throws Exception {
        List<InstanceSettings.Setting> settings = InstanceSettings.settings(builder, configType);
        assertThat(InstanceSettings.boundByHand(builder, configType)).as("settings of %s without a setter of one"
                + " plain value: bind each in InstanceBuilders and name it in BY_HAND", pattern)
                .isSubsetOf(BY_HAND.keySet());
        assertThat(settings).extracting(InstanceSettings.Setting::field).contains("name", "operationTimeout",
                "staleAfter");

        StrategyConfig defaults = config(run(pattern, List.of()));
        List<String> properties = new ArrayList<>();
        Map<String, Object> expected = new LinkedHashMap<>();
        for (InstanceSettings.Setting s : settings) {
            Object other = otherThan(read(defaults, s.field()), s.type());
            properties.add(s.property() + "=" + (other instanceof Duration d ? d.toMillis() + "ms" : other));
            expected.put(s.field(), other);
        }
        StrategyConfig set = config(run(pattern, properties));
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            Object actual = read(set, e.getKey());
            assertThat(actual instanceof OptionalLong l ? (Object) l.getAsLong() : actual)
                    .as(pattern + "." + InstanceSettings.kebab(e.getKey())).isEqualTo(e.getValue());
        }
    }

    @Test
    void shouldGiveEveryInstanceTheApplicationsClock() {
        java.time.Clock fixed = java.time.Clock.fixed(java.time.Instant.parse("2030-01-01T00:00:00Z"),
                java.time.ZoneOffset.UTC);
        TestContexts.runner(database).withBean(java.time.Clock.class, () -> fixed)
                .withPropertyValues("consistency-kit.maintenance.enabled=false",
                        "consistency-kit.two-phase.payments.lease=30s", "consistency-kit.ledger.books.stale-after=9s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(config(context.getBean("payments")).clock()).isSameAs(fixed);
                    assertThat(config(context.getBean("books")).clock()).isSameAs(fixed);
                });
    }

    @Test
    void shouldRefuseAPropertyNoInstanceKnows() {
        TestContexts.runner(database).withPropertyValues("consistency-kit.maintenance.enabled=false",
                "consistency-kit.two-phase.payments.leese=30s").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(
                            "consistency-kit.two-phase.payments.leese is not a setting").hasMessageContaining("lease");
                });
    }

    @Test
    void shouldRefuseAPropertyNoGroupKnowsAtAnyDepth() {
        Map<String, String> misspelt = new LinkedHashMap<>();
        misspelt.put("consistency-kit.job-queue.shipping.retry-policy.max-atempts=2",
                "consistency-kit.job-queue.shipping.retry-policy.max-atempts is not a setting");
        misspelt.put("consistency-kit.sync-flag.users.targets[1].version-feild=v",
                "consistency-kit.sync-flag.users.targets[1].version-feild is not a setting");
        misspelt.put("consistency-kit.maintenance.enabeld=false",
                "consistency-kit.maintenance.enabeld is not a setting");
        misspelt.put("consistency-kit.dashboard.refresh=5s", "consistency-kit.dashboard.refresh is not a setting");
        misspelt.forEach((property, message) -> TestContexts.runner(database).withPropertyValues(
                "consistency-kit.maintenance.enabled=false", "consistency-kit.ensure-indexes=false",
                "consistency-kit.job-queue.shipping.retry-policy.max-attempts=3",
                "consistency-kit.sync-flag.users.master-collection=users",
                "consistency-kit.sync-flag.users.master-fields=name",
                "consistency-kit.sync-flag.users.targets[0].collection=comments",
                "consistency-kit.sync-flag.users.targets[0].id-field=authorId",
                "consistency-kit.sync-flag.users.targets[0].copies.name=authorName",
                "consistency-kit.sync-flag.users.targets[1].collection=posts",
                "consistency-kit.sync-flag.users.targets[1].id-field=authorId", property).run(context -> {
                    assertThat(context).as(property).hasFailed();
                    assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(
                            context.getStartupFailure())).as(property).hasMessageContaining(message);
                }));
        TestContexts.runner(database).withPropertyValues("consistency-kit.maintenance.enabled=false",
                "consistency-kit.ensure-indexes=false", "consistency-kit.job-queue.shipping.retry-policy.max-attempts=2",
                "consistency-kit.sync-flag.users.master-collection=users",
                "consistency-kit.sync-flag.users.master-fields=name",
                "consistency-kit.sync-flag.users.targets[0].collection=comments",
                "consistency-kit.sync-flag.users.targets[0].id-field=authorId",
                "consistency-kit.sync-flag.users.targets[0].copies.name=authorName").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(config(context.getBean("shipping")).retryPolicy().maxAttempts()).isEqualTo(2);
                });
    }

    private Object run(String pattern, List<String> settings) throws Exception {
        String prefix = "consistency-kit." + pattern + ".x.";
        List<String> properties = new ArrayList<>(List.of("consistency-kit.maintenance.enabled=false",
                "consistency-kit.ensure-indexes=false"));
        if (pattern.equals("sync-flag")) {
            properties.addAll(List.of(prefix + "master-collection=users", prefix + "master-fields=name",
                    prefix + "targets[0].collection=comments", prefix + "targets[0].id-field=authorId",
                    prefix + "targets[0].copies.name=authorName"));
        }
        properties.add(prefix + "operation-timeout=9s");   // declares the instance when no setting is given
        settings.forEach(s -> properties.add(prefix + s));
        Object[] bean = new Object[1];
        TestContexts.runner(database).withPropertyValues(properties.toArray(new String[0])).run(context -> {
            assertThat(context).hasNotFailed();
            bean[0] = context.getBean("x");
        });
        return bean[0];
    }

    private static StrategyConfig config(Object instance) throws Exception {
        return (StrategyConfig) instance.getClass().getMethod("config").invoke(instance);
    }

    private static Object read(StrategyConfig config, String field) throws Exception {
        Method getter = config.getClass().getMethod(field);
        return getter.invoke(config);
    }

    /** A value of {@code type} other than {@code current} that every pattern accepts. */
    private static Object otherThan(Object current, Class<?> type) {
        if (type == String.class) {
            return current + "Other";
        }
        if (type == Duration.class) {
            return ((Duration) current).plusSeconds(1);
        }
        if (type == Integer.class) {
            return (Integer) current + 1;
        }
        if (type == Long.class) {
            return current instanceof OptionalLong l && l.isPresent() ? l.getAsLong() + 1 : -100L;
        }
        if (type == Boolean.class) {
            return !(Boolean) current;
        }
        if (type.isEnum()) {
            List<Object> constants = List.of(type.getEnumConstants());
            return constants.get((constants.indexOf(current) + 1) % constants.size());
        }
        throw new AssertionError("a plain setting of a type this test cannot vary: " + type);
    }
}
