package dev.consistencykit.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * The auto-configurations of {@link ConsistencyKitTest}: Boot's MongoDB client, the embedded server when enabled, and
 * consistency-kit's instances (listed in
 * {@code META-INF/spring/dev.consistencykit.spring.test.AutoConfigureConsistencyKit.imports}). Usable alone on a test
 * that builds its own slice.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureConsistencyKit {
}
