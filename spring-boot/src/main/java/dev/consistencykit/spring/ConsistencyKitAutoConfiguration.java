package dev.consistencykit.spring;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;

import dev.consistencykit.core.ConsistencyStrategy;

/**
 * consistency-kit in a Spring Boot application: the instances the {@code consistency-kit.*} properties declare, on
 * the application's {@code MongoClient}, with their indexes, maintenance and job workers tied to the application's
 * lifecycle. Every bean gives way to the application's own.
 */
@AutoConfiguration(afterName = "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration")
@ConditionalOnClass({MongoClient.class, ConsistencyStrategy.class})
@EnableConfigurationProperties(ConsistencyKitProperties.class)
public final class ConsistencyKitAutoConfiguration {

    /** Registers the instances the properties declare (static: it runs before the other beans exist). */
    @Bean
    static ConsistencyKitInstances consistencyKitInstances() {
        return new ConsistencyKitInstances();
    }

    /**
     * The database of every instance: {@code consistency-kit.database}, else {@code spring.mongodb.database}, else
     * the database {@code spring.mongodb.uri} names, else {@code test} (as Boot's own default).
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(MongoClient.class)
    ConsistencyKitDatabase consistencyKitDatabase(MongoClient client, ConsistencyKitProperties properties,
                                                  Environment environment) {
        String name = properties.getDatabase();
        if (name == null) {
            name = environment.getProperty("spring.mongodb.database");
        }
        if (name == null && environment.getProperty("spring.mongodb.uri") != null) {
            name = new ConnectionString(environment.getProperty("spring.mongodb.uri")).getDatabase();
        }
        return new ConsistencyKitDatabase(client.getDatabase(name != null ? name : "test"));
    }

    /** Indexes, maintenance and job workers with the application's lifecycle. */
    @Bean
    @ConditionalOnMissingBean
    ConsistencyKitLifecycle consistencyKitLifecycle(ListableBeanFactory beans, ConsistencyKitProperties properties) {
        return new ConsistencyKitLifecycle(beans, properties);
    }
}
