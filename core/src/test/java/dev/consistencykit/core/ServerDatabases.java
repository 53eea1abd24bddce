package dev.consistencykit.core;

import java.util.UUID;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.embedded.EmbeddedMongo;

/**
 * Core's server tests get a fresh database per test method on the server {@code MONGODB_URI} names, or else on an
 * embedded server started once for the test run, and the database is dropped afterwards. (The testkit's
 * {@code MongoTestExtension} does the same for every other module; core cannot depend on the testkit, which depends
 * on it.)
 */
public final class ServerDatabases implements ParameterResolver, AfterEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            ServerDatabases.class);

    /** The shared client, on {@code MONGODB_URI} or on an embedded server, for the whole run. */
    private static final class Shared {
        static final MongoClient CLIENT = open();

        private static MongoClient open() {
            if (!onEmbeddedServer()) {
                return MongoClients.create(System.getenv("MONGODB_URI"));
            }
            EmbeddedMongo server = EmbeddedMongo.start();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "embedded-server-stop"));
            return MongoClients.create(server.connectionString());
        }
    }

    /**
     * Whether the tests run on the embedded server (no {@code MONGODB_URI}): a test of the server's own semantics
     * leaves to a real server what the embedded one is known to do differently (docs/embedded-server.md).
     */
    public static boolean onEmbeddedServer() {
        String uri = System.getenv("MONGODB_URI");
        return uri == null || uri.isBlank();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == MongoDatabase.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        if (parameter.getParameter().getType() != MongoDatabase.class) {
            throw new ParameterResolutionException("only MongoDatabase parameters");
        }
        String name = context.getStore(NAMESPACE).getOrComputeIfAbsent("database",
                key -> "ck_core_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12), String.class);
        return Shared.CLIENT.getDatabase(name);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        String name = context.getStore(NAMESPACE).remove("database", String.class);
        if (name != null) {
            Shared.CLIENT.getDatabase(name).drop();
        }
    }
}
