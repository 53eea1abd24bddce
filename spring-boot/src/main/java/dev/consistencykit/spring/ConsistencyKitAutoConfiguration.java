package dev.consistencykit.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.env.Environment;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;

import io.micrometer.core.instrument.MeterRegistry;

import dev.consistencykit.core.CallObserver;
import dev.consistencykit.core.ConsistencyStrategy;
import dev.consistencykit.core.Maintenance;

/**
 * consistency-kit in a Spring Boot application: the instances the {@code consistency-kit.*} properties declare, on
 * the application's {@code MongoClient}, with their indexes, maintenance and job workers tied to the application's
 * lifecycle. Every bean gives way to the application's own.
 */
@AutoConfiguration(afterName = "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration")
@ConditionalOnClass({MongoClient.class, ConsistencyStrategy.class})
@EnableConfigurationProperties(ConsistencyKitProperties.class)
@ImportRuntimeHints(ConsistencyKitRuntimeHints.class)
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

    /**
     * The same database as a {@code MongoDatabase} bean, for the application's own collections (unless it defines
     * one).
     */
    @Bean
    @ConditionalOnMissingBean(MongoDatabase.class)
    @ConditionalOnBean(ConsistencyKitDatabase.class)
    MongoDatabase consistencyKitMongoDatabase(ConsistencyKitDatabase database) {
        return database.database();
    }

    /**
     * One health indicator per instance, named by its bean name, under {@code consistencyKit}; off with
     * {@code management.health.consistency-kit.enabled=false}, as Boot's own indicators.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.health.contributor.HealthIndicator",
            "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"})
    @ConditionalOnEnabledHealthIndicator("consistency-kit")
    static final class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "consistencyKitHealthContributor")
        CompositeHealthContributor consistencyKitHealthContributor(ListableBeanFactory beans,
                                                                   ConsistencyKitProperties properties,
                                                                   ObjectProvider<ConsistencyKitLifecycle> lifecycle) {
            Map<String, HealthIndicator> indicators = new LinkedHashMap<>();
            Supplier<Maintenance> maintenance = () -> {
                ConsistencyKitLifecycle l = lifecycle.getIfAvailable();
                return l == null ? null : l.maintenance();
            };
            beans.getBeansOfType(ConsistencyStrategy.class).forEach((name, instance) -> indicators.put(name,
                    new InstanceHealth(instance, properties.getHealth(), maintenance)));
            return CompositeHealthContributor.fromMap(indicators);
        }
    }

    /** Every instance's counters in the application's meter registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"io.micrometer.core.instrument.MeterRegistry",
            "dev.consistencykit.micrometer.ConsistencyKitMeters"})
    static final class MetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        ConsistencyKitMeterBinding consistencyKitMeterBinding(ListableBeanFactory beans,
                                                              ObjectProvider<MeterRegistry> registry) {
            return new ConsistencyKitMeterBinding(beans, registry);
        }
    }

    /**
     * A Micrometer observation per public call of every instance (tags {@code pattern}, {@code instance},
     * {@code operation}, {@code outcome}), in the application's observation registry, so that the driver's command
     * spans nest under them.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"io.micrometer.observation.ObservationRegistry",
            "dev.consistencykit.micrometer.ConsistencyKitObservations"})
    static final class ObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
        CallObserver consistencyKitCallObserver(io.micrometer.observation.ObservationRegistry registry) {
            return new dev.consistencykit.micrometer.ConsistencyKitObservations(registry);
        }
    }

    /** The {@code consistencykit} actuator endpoint. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    static final class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        ConsistencyKitEndpoint consistencyKitEndpoint(ListableBeanFactory beans) {
            return new ConsistencyKitEndpoint(beans);
        }
    }

    /**
     * The operator's dashboard under {@code consistency-kit.dashboard.path}, over every instance bean, when
     * {@code consistency-kit.dashboard.enabled} and the dashboard module is on the class path of a servlet web
     * application.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.consistencykit.dashboard.Dashboard", "jakarta.servlet.http.HttpServlet"})
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnProperty(prefix = "consistency-kit.dashboard", name = "enabled", havingValue = "true")
    static final class DashboardConfiguration {

        @Bean
        @ConditionalOnMissingBean
        dev.consistencykit.dashboard.Dashboard consistencyKitDashboard(ListableBeanFactory beans,
                                                                        ConsistencyKitDatabase database,
                                                                        ConsistencyKitProperties properties) {
            ConsistencyKitProperties.Dashboard p = properties.getDashboard();
            dev.consistencykit.dashboard.DashboardSettings settings = new dev.consistencykit.dashboard
                    .DashboardSettings().actionsEnabled(p.isActionsEnabled()).token(p.getToken())
                    .staleAfter(p.getStaleAfter()).refreshEvery(p.getRefreshEvery());
            return new dev.consistencykit.dashboard.Dashboard(database.database().getName(), () -> beans
                    .getBeansOfType(ConsistencyStrategy.class).values().stream()
                    .map(s -> dev.consistencykit.dashboard.DashboardInstance.of((ConsistencyStrategy<?>) s)).toList(),
                    settings);
        }

        @Bean
        @ConditionalOnMissingBean(name = "consistencyKitDashboardServlet")
        ServletRegistrationBean<DashboardServlet> consistencyKitDashboardServlet(
                dev.consistencykit.dashboard.Dashboard dashboard, ConsistencyKitProperties properties) {
            String path = properties.getDashboard().getPath();
            if (path == null || !path.startsWith("/") || path.endsWith("/") || path.contains("*")) {
                throw new IllegalStateException("consistency-kit.dashboard.path must start with '/', and neither end"
                        + " with '/' nor hold '*', was '" + path + "'");
            }
            ServletRegistrationBean<DashboardServlet> registration = new ServletRegistrationBean<>(
                    new DashboardServlet(dashboard), path, path + "/*");
            registration.setName("consistencyKitDashboard");
            return registration;
        }
    }

    /** Indexes, maintenance and job workers with the application's lifecycle. */
    @Bean
    @ConditionalOnMissingBean
    ConsistencyKitLifecycle consistencyKitLifecycle(ListableBeanFactory beans, ConsistencyKitProperties properties) {
        return new ConsistencyKitLifecycle(beans, properties);
    }
}
