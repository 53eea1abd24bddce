package dev.consistencykit.core.spi;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.consistencykit.core.ConsistencyStrategy;

/**
 * A pattern's counters by name, read from its metrics record: what {@link ConsistencyStrategy#counters()} returns and
 * what a metrics binding publishes.
 *
 * <p>Stateless and thread-safe.
 */
public final class Counters {

    private Counters() {
    }

    /**
     * Every numeric component of {@code metrics}, by component name, in declaration order.
     *
     * @throws IllegalArgumentException if a component cannot be read
     */
    public static Map<String, Long> of(Record metrics) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (RecordComponent c : metrics.getClass().getRecordComponents()) {
            Class<?> type = c.getType();
            if (type != long.class && type != int.class && type != Long.class && type != Integer.class) {
                continue;
            }
            try {
                Object value = c.getAccessor().invoke(metrics);
                if (value instanceof Number n) {
                    out.put(c.getName(), n.longValue());
                }
            } catch (IllegalAccessException | InvocationTargetException e) {
                throw new IllegalArgumentException("cannot read " + c.getName() + " of " + metrics.getClass(), e);
            }
        }
        return Collections.unmodifiableMap(out);
    }
}
