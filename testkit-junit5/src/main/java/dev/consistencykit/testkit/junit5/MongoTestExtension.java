package dev.consistencykit.testkit.junit5;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.Sharding;

/**
 * JUnit 5 extension that gives each test method a fresh, uniquely named database on the
 * {@linkplain MongoTarget#fromEnvironment() configured server} and drops it afterwards.
 *
 * <p>Test methods, constructors and lifecycle methods may declare parameters of type {@link MongoDatabase} (the
 * test's fresh database), {@link MongoClient} (the shared client) and {@link MongoTarget}.
 *
 * <pre>{@code
 * @ExtendWith(MongoTestExtension.class)
 * class AccountTest {
 *     @Test
 *     void shouldDebitOnce(MongoDatabase db) {   // a fresh database, dropped after the test
 *         db.getCollection("accounts").insertMany(List.of(new Document("_id", "a").append("balance", 100L),
 *                 new Document("_id", "b").append("balance", 0L)));
 *         TwoPhaseCommit payments = TwoPhaseCommit.on(db);
 *         payments.transfer(Transfer.of(OperationId.of("t-1"), "a", "b", 30));
 *         payments.transfer(Transfer.of(OperationId.of("t-1"), "a", "b", 30));   // the same id: applied once
 *         assertThat(db.getCollection("accounts").find(new Document("_id", "a")).first().getLong("balance"))
 *                 .isEqualTo(70L);
 *     }
 * }
 * }</pre>
 */
public final class MongoTestExtension implements ParameterResolver, AfterEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            MongoTestExtension.class);
    private static final String DATABASE_KEY = "database";

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == MongoDatabase.class || type == MongoClient.class || type == MongoTarget.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        MongoTarget target = MongoTarget.fromEnvironment();
        if (type == MongoTarget.class) {
            return target;
        }
        if (type == MongoClient.class) {
            return target.client();
        }
        if (type == MongoDatabase.class) {
            ExtensionContext.Store store = extensionContext.getStore(NAMESPACE);
            // a database made for the test: sharded by the suite's plan where the server can shard (Sharding)
            String name = store.getOrComputeIfAbsent(DATABASE_KEY, key -> Sharding.of(target.client())
                    .applyPlan(target.client().getDatabase(freshName(extensionContext))).getName(), String.class);
            return target.client().getDatabase(name);
        }
        throw new ParameterResolutionException("unsupported parameter type " + type);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        String name = context.getStore(NAMESPACE).remove(DATABASE_KEY, String.class);
        if (name != null) {
            MongoTarget.drop(MongoTarget.fromEnvironment().client().getDatabase(name));
        }
    }

    /** A unique database name: {@code ck_<test>_<random>}; see {@link MongoTarget#freshDatabaseName(String)}. */
    public static String freshName(String hint) {
        return MongoTarget.freshDatabaseName(hint);
    }

    private static String freshName(ExtensionContext context) {
        return freshName(context.getTestMethod().map(m -> m.getName()).orElse(context.getDisplayName()));
    }
}
