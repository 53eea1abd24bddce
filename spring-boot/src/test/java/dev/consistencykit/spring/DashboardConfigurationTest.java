package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.dashboard.Dashboard;
import dev.consistencykit.dashboard.DashboardRequest;
import dev.consistencykit.testkit.MongoTarget;

/**
 * The dashboard in a Spring Boot servlet application: off unless enabled; then served under its path over every
 * instance bean, read-only unless actions are enabled, which need a token.
 */
class DashboardConfigurationTest {

    private String database;

    @BeforeEach
    void name() {
        database = MongoTarget.freshDatabaseName("dashboard");
    }

    @AfterEach
    void drop() {
        MongoTarget.fromEnvironment().client().getDatabase(database).drop();
    }

    private WebApplicationContextRunner runner() {
        return new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ConsistencyKitAutoConfiguration.class))
                .withBean(MongoClient.class, () -> MongoClients.create(MongoTarget.fromEnvironment()
                        .connectionString()))
                .withPropertyValues("consistency-kit.database=" + database, "consistency-kit.maintenance.enabled=false",
                        "consistency-kit.two-phase.payments.accounts-collection=accounts");
    }

    @Test
    void shouldServeNoDashboardUnlessEnabled() {
        runner().run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(Dashboard.class);
            assertThat(context).doesNotHaveBean("consistencyKitDashboardServlet");
        });
        TestContexts.runner(database).withPropertyValues("consistency-kit.dashboard.enabled=true")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Dashboard.class));
    }

    @Test
    void shouldServeTheDashboardUnderItsPathOverEveryInstanceBean() {
        runner().withPropertyValues("consistency-kit.dashboard.enabled=true", "consistency-kit.dashboard.path=/ops")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Dashboard.class);
                    ServletRegistrationBean<?> servlet = context.getBean("consistencyKitDashboardServlet",
                            ServletRegistrationBean.class);
                    assertThat(servlet.getUrlMappings()).containsExactly("/ops", "/ops/*");
                    Dashboard dashboard = context.getBean(Dashboard.class);
                    Document overview = Document.parse(dashboard.handle(new DashboardRequest("GET", "/api/overview",
                            Map.of(), null)).text());
                    assertThat(overview.getList("instances", Document.class)).extracting(i -> i.get("key"))
                            .containsExactly("two-phase/payments");
                    assertThat(overview.getBoolean("actions")).isFalse();
                    assertThat(dashboard.handle(new DashboardRequest("POST", "/api/instances/two-phase/payments/"
                            + "recover", Map.of(), "anything-at-all-long-enough")).status()).isEqualTo(403);
                });
    }

    @Test
    void shouldRefuseActionsWithoutATokenAndAPathItCannotServe() {
        runner().withPropertyValues("consistency-kit.dashboard.enabled=true",
                "consistency-kit.dashboard.actions-enabled=true").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("need a token"));
        runner().withPropertyValues("consistency-kit.dashboard.enabled=true", "consistency-kit.dashboard.path=/ops/")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("consistency-kit.dashboard.path"));
        runner().withPropertyValues("consistency-kit.dashboard.enabled=true",
                "consistency-kit.dashboard.actions-enabled=true",
                "consistency-kit.dashboard.token=a-long-enough-secret-token").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Dashboard.class).settings().actionsEnabled()).isTrue();
                });
    }
}
