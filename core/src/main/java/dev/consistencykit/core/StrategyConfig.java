package dev.consistencykit.core;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Checks;

/**
 * What every pattern's configuration shares (the instance name, the retry policy, the local clock, the bound of one
 * call), and how every configuration works, the way Failsafe's policy configurations do: a configuration is a set of
 * fields with their defaults and a getter each; its entry type's builder writes into one and hands out a copy on
 * {@code build()}, so a configuration an instance holds never changes. Adding a setting to a pattern is a field (with
 * its default) and a getter in its configuration, and a setter in the configuration's nested {@code Settings} class,
 * which the entry type's builder extends: equality, hash code, {@code toString}, {@code Builder.from} and the Spring
 * property of the setting's name cover every field, by construction.
 *
 * <p>Settings are checked once, in the builder: a setter checks its own value ({@code NullPointerException},
 * {@code IllegalArgumentException}; {@link InvalidInputException} for a name that reaches the server),
 * {@code build()} checks how the values combine ({@code IllegalStateException}).
 */
public abstract class StrategyConfig implements Cloneable {

    String name;
    RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    Clock clock = Clock.systemUTC();
    Duration operationTimeout = Calls.DEFAULT_OPERATION_TIMEOUT;

    /** A configuration with every default, named {@code defaultName}. */
    protected StrategyConfig(String defaultName) {
        this.name = Objects.requireNonNull(defaultName, "defaultName");
    }

    /** The instance name, in log lines, metrics and exceptions. */
    public final String name() {
        return name;
    }

    /** The retry of transient errors. */
    public final RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** The local clock server time is estimated from. */
    public final Clock clock() {
        return clock;
    }

    /** The bound of one public call: every driver operation carries it, and no retry starts that it cannot hold. */
    public final Duration operationTimeout() {
        return operationTimeout;
    }

    /** How long an operation may stand unfinished before {@code recover()} takes it over. */
    public abstract Duration staleAfter();

    /**
     * Checks how the settings combine, once each is known to be valid on its own: {@code build()} calls it on the copy
     * it hands out. Nothing to check by default.
     *
     * @throws IllegalStateException for settings that contradict each other
     */
    protected void checkCombination() {
    }

    /** A copy of this configuration: what a builder hands out, so that setting the builder again changes nothing. */
    final StrategyConfig copy() {
        try {
            return (StrategyConfig) clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);   // Cloneable
        }
    }

    /**
     * The name of every setting of the configurations of {@code type}, the pattern's own first: what
     * {@code toString}, equality and {@code Builder.from} cover, and what the Spring starter binds by name.
     */
    public static List<String> settingNames(Class<? extends StrategyConfig> type) {
        return fields(type).stream().map(Field::getName).toList();
    }

    /** Every setting: the instance fields of this class and of the pattern's configuration class. */
    private List<Field> settings() {
        return fields(getClass());
    }

    private static List<Field> fields(Class<?> type) {
        List<Field> fields = new ArrayList<>();
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && !f.isSynthetic()) {
                    f.setAccessible(true);
                    fields.add(f);
                }
            }
        }
        return fields;
    }

    private static Object valueOf(Field f, Object config) {
        try {
            return f.get(config);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);   // made accessible in settings()
        }
    }

    /** Equal when of the same pattern with every setting equal. */
    @SuppressWarnings("EqualsGetClass")   // final here, and two patterns' configurations are never equal
    @Override
    public final boolean equals(Object other) {
        if (other == null || other.getClass() != getClass()) {
            return false;
        }
        for (Field f : settings()) {
            if (!Objects.equals(valueOf(f, this), valueOf(f, other))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public final int hashCode() {
        int hash = getClass().hashCode();
        for (Field f : settings()) {
            hash = 31 * hash + Objects.hashCode(valueOf(f, this));
        }
        return hash;
    }

    /** {@code TypeName[setting=value, …]}, the pattern's own settings first. */
    @Override
    public final String toString() {
        StringBuilder s = new StringBuilder(getClass().getSimpleName()).append('[');
        List<Field> fields = settings();
        for (int i = 0; i < fields.size(); i++) {
            s.append(i == 0 ? "" : ", ").append(fields.get(i).getName()).append('=').append(valueOf(fields.get(i), this));
        }
        return s.append(']').toString();
    }
}
