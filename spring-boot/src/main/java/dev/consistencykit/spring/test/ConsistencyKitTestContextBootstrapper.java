package dev.consistencykit.spring.test;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.test.context.SpringBootTestContextBootstrapper;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;

/**
 * {@link ConsistencyKitTest}'s bootstrapper: the slice's defaults (the embedded server, no maintenance runner),
 * then the test's own properties, which win.
 */
final class ConsistencyKitTestContextBootstrapper extends SpringBootTestContextBootstrapper {

    static final List<String> DEFAULTS = List.of("consistency-kit.embedded.enabled=true",
            "consistency-kit.maintenance.enabled=false");

    @Override
    protected String[] getProperties(Class<?> testClass) {
        List<String> all = new ArrayList<>(DEFAULTS);
        MergedAnnotations.from(testClass, SearchStrategy.INHERITED_ANNOTATIONS).get(ConsistencyKitTest.class)
                .getValue("properties", String[].class).ifPresent(p -> all.addAll(List.of(p)));
        return all.toArray(new String[0]);
    }
}
