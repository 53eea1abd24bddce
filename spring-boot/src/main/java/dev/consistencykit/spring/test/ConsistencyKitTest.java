package dev.consistencykit.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.autoconfigure.OverrideAutoConfiguration;
import org.springframework.test.context.BootstrapWith;
import org.springframework.test.context.junit.jupiter.SpringExtension;

/**
 * A test slice for an application's own handlers and services on consistency-kit, in the spirit of
 * {@code @DataMongoTest}: the application's configuration with only the MongoDB and consistency-kit
 * auto-configurations (no web server, no other auto-configuration), its instances, handlers and services injectable,
 * and, unless the test says otherwise, the embedded in-memory server ({@code consistency-kit.embedded.enabled=true}).
 *
 * <p>To run the same test against a real server, define a
 * {@link org.springframework.boot.mongodb.autoconfigure.MongoConnectionDetails} bean (a Testcontainers
 * {@code @ServiceConnection} does; so does a {@code @TestConfiguration} reading the URI from the environment): the
 * embedded server backs off. The maintenance runner is off in the slice (the test runs recovery with
 * {@code recover()}); job workers run as the application's properties say
 * ({@code consistency-kit.job-queue.<name>.workers=0} in {@link #properties()} lets the test run jobs with
 * {@code processNext()}).
 *
 * <p>Annotate a test class with it and inject the instances by name ({@code @Autowired JobQueue shipping}); the sample
 * application's {@code ShippingSliceTest} (in {@code examples/spring-boot-sample}) is one, run on the embedded server
 * and, in this project's CI, on a real engine.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@BootstrapWith(ConsistencyKitTestContextBootstrapper.class)
@ExtendWith(SpringExtension.class)
@OverrideAutoConfiguration(enabled = false)
@AutoConfigureConsistencyKit
public @interface ConsistencyKitTest {

    /** Properties in {@code key=value} form added to the environment before the test's context starts. */
    String[] properties() default {};
}
