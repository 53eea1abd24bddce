package dev.consistencykit.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

import com.mongodb.ConnectionString;

import dev.consistencykit.embedded.EmbeddedMongo;

/**
 * {@code consistency-kit.embedded.enabled=true}: the application gets an in-memory MongoDB wire-protocol server of its
 * own (the embedded server, started on a free port and closed with the context) for development and tests, given to
 * Boot's MongoDB auto-configuration as its {@link MongoConnectionDetails}. Off unless asked for, never implied; it
 * backs off when a {@code MongoConnectionDetails} is already defined (a Testcontainers {@code @ServiceConnection}, or
 * a test's own bean pointing at a real server). The startup log says, as a warning, that the data is in memory.
 *
 * <p>Needs {@code dev.consistencykit:consistency-kit-embedded-server} on the class path (a test or development
 * dependency): asked for without it, the context fails at once and says which dependency to add.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails")
@ConditionalOnProperty(prefix = "consistency-kit.embedded", name = "enabled", havingValue = "true")
public final class EmbeddedServerAutoConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedServerAutoConfiguration.class);

    /** The property that turns it on. */
    static final String PROPERTY = "consistency-kit.embedded.enabled";

    /** The in-memory server, and the connection details Boot's {@code MongoClient} is built from. */
    @Bean
    @ConditionalOnMissingBean(MongoConnectionDetails.class)
    EmbeddedConnectionDetails consistencyKitEmbeddedServer() {
        if (!ClassUtils.isPresent("dev.consistencykit.embedded.EmbeddedMongo",
                EmbeddedServerAutoConfiguration.class.getClassLoader())) {
            throw new IllegalStateException(PROPERTY + "=true needs the embedded server on the class path: add"
                    + " dev.consistencykit:consistency-kit-embedded-server (scope test, or a development profile),"
                    + " or remove the property and set spring.mongodb.uri to a MongoDB server");
        }
        EmbeddedMongo server = EmbeddedMongo.start();
        LOG.warn("consistency-kit: MongoDB is an IN-MEMORY embedded server at {} ({}=true): every write is lost when"
                + " the application stops; for development and tests only, never in production",
                server.connectionString(), PROPERTY);
        return new EmbeddedConnectionDetails(server);
    }

    /** The embedded server as Boot's connection details; closed with the context. */
    static final class EmbeddedConnectionDetails implements MongoConnectionDetails, AutoCloseable {

        private final EmbeddedMongo server;

        EmbeddedConnectionDetails(EmbeddedMongo server) {
            this.server = server;
        }

        @Override
        public ConnectionString getConnectionString() {
            return new ConnectionString(server.connectionString());
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
