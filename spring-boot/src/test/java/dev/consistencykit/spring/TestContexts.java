package dev.consistencykit.spring;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.testkit.MongoTarget;

/** An application context with the auto-configuration, a client of its own (the context closes it) and a database. */
final class TestContexts {

    private TestContexts() {
    }

    static ApplicationContextRunner runner(String database) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ConsistencyKitAutoConfiguration.class))
                .withBean(MongoClient.class, () -> MongoClients.create(
                        MongoTarget.fromEnvironment().connectionString()))
                .withPropertyValues("consistency-kit.database=" + database);
    }
}
