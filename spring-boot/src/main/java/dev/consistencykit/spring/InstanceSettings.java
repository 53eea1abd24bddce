package dev.consistencykit.spring;

import java.beans.PropertyDescriptor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.util.ClassUtils;

import dev.consistencykit.core.StrategyBuilder;
import dev.consistencykit.core.StrategyConfig;

/**
 * Every setting of a pattern as a property of its instance, with nothing here naming one: a field of the pattern's
 * configuration is the property of its name in kebab case ({@code maxPendingPerDocument} is
 * {@code consistency-kit.two-phase.payments.max-pending-per-document}), bound with Spring's conversions (durations
 * such as {@code 30s}, enum constants, numbers) to the type of the builder's setter of the same name, which checks the
 * value. A setting added to a configuration with its setter is a property at once.
 *
 * <p>A setting whose value is not one plain value (the sync flag's master and targets, the versioned store's
 * retention, the retry policy) has no such setter; {@link #boundByHand} names them, and {@link InstanceBuilders} binds
 * each from properties of its own. A property an instance does not know is refused at start, with the ones it knows.
 */
final class InstanceSettings {

    private static final Bindable<Map<String, Object>> GIVEN = Bindable.mapOf(String.class, Object.class);

    private InstanceSettings() {
    }

    /** One setting: the configuration's field and the builder's setter of the same name, which takes a plain value. */
    record Setting(String field, Method setter) {

        /** The property's name under the instance. */
        String property() {
            return kebab(field);
        }

        Class<?> type() {
            Class<?> t = setter.getParameterTypes()[0];
            return ClassUtils.resolvePrimitiveIfNecessary(t);
        }
    }

    /** The settings of {@code configType} that {@code builderType} sets from one plain value, in field order. */
    static List<Setting> settings(Class<?> builderType, Class<? extends StrategyConfig> configType) {
        List<Setting> out = new ArrayList<>();
        for (String field : StrategyConfig.settingNames(configType)) {
            plainSetter(builderType, field).ifPresent(m -> out.add(new Setting(field, m)));
        }
        return out;
    }

    /** The fields of {@code configType} (and of {@link StrategyConfig}) that no setter of a plain value sets. */
    static Set<String> boundByHand(Class<?> builderType, Class<? extends StrategyConfig> configType) {
        Set<String> out = new TreeSet<>();
        for (String field : StrategyConfig.settingNames(configType)) {
            if (plainSetter(builderType, field).isEmpty()) {
                out.add(field);
            }
        }
        return out;
    }

    /**
     * Applies to {@code builder} every setting the properties under {@code prefix} give, after checking that each
     * property given there, at every depth, is one of the settings or of {@code ownType} (the instance's other
     * properties, with their groups: {@code retry-policy.max-attempts}, {@code targets[0].collection}).
     *
     * @throws IllegalStateException for a property the instance does not know, or a value its setter refuses
     */
    static <B extends StrategyBuilder<B, ?>> B bind(B builder, Class<? extends StrategyConfig> configType,
                                                    Binder binder, String prefix, Class<?> ownType) {
        List<Setting> settings = settings(builder.getClass(), configType);
        Set<String> known = new TreeSet<>(propertiesOf(ownType));
        settings.forEach(s -> known.add(s.property()));
        refuseUnknown(binder, prefix, known, "this instance");
        refuseUnknownBelow(binder, prefix, ownType);
        for (Setting s : settings) {
            String key = prefix + "." + s.property();
            binder.bind(key, Bindable.of(s.type())).ifBound(value -> apply(builder, s, key, value));
        }
        return builder;
    }

    /**
     * Refuses a property given in a group of {@code type}'s properties, at any depth, that the group does not have:
     * a group is a property whose type is one of {@link ConsistencyKitProperties}' classes (a list or a map of them
     * is a group per element, as {@code schedules.<name>}; the instances' own maps are checked as instances); a map
     * of plain values ({@code copies}) takes any key. Spring binds a group's properties leniently, so a misspelt
     * one would leave its default in place without a word.
     *
     * @throws IllegalStateException naming the property and the ones its group has
     */
    static void refuseUnknownBelow(Binder binder, String prefix, Class<?> type) {
        for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(type)) {
            if (p.getReadMethod() == null || p.getReadMethod().getDeclaringClass() == Object.class) {
                continue;
            }
            String key = prefix + "." + kebab(p.getName());
            Class<?> raw = p.getPropertyType();
            if (group(raw)) {
                refuseUnknownIn(binder, key, raw);
            } else if (List.class.isAssignableFrom(raw)
                    && p.getReadMethod().getGenericReturnType() instanceof ParameterizedType list
                    && list.getActualTypeArguments()[0] instanceof Class<?> element && group(element)) {
                for (int i = 0; binder.bind(key + "[" + i + "]", GIVEN).isBound(); i++) {
                    refuseUnknownIn(binder, key + "[" + i + "]", element);
                }
            } else if (Map.class.isAssignableFrom(raw)
                    && p.getReadMethod().getGenericReturnType() instanceof ParameterizedType map
                    && map.getActualTypeArguments()[1] instanceof Class<?> element && group(element)
                    && !ConsistencyKitProperties.Instance.class.isAssignableFrom(element)) {
                for (String entry : binder.bind(key, GIVEN).orElse(Map.of()).keySet()) {
                    refuseUnknownIn(binder, key + "." + entry, element);
                }
            }
        }
    }

    private static void refuseUnknownIn(Binder binder, String prefix, Class<?> group) {
        refuseUnknown(binder, prefix, new TreeSet<>(propertiesOf(group)), prefix);
        refuseUnknownBelow(binder, prefix, group);
    }

    private static void refuseUnknown(Binder binder, String prefix, Set<String> known, String of) {
        for (String key : binder.bind(prefix, GIVEN).orElse(Map.of()).keySet()) {
            if (known.stream().noneMatch(k -> relaxed(k).equals(relaxed(key.replaceFirst("\\[.*", ""))))) {
                throw new IllegalStateException("consistency-kit: " + prefix + "." + key + " is not a setting of "
                        + of + "; its settings: " + known);
            }
        }
    }

    /** Whether {@code type} is a group of properties: one of {@link ConsistencyKitProperties}' classes. */
    static boolean group(Class<?> type) {
        return type.getEnclosingClass() == ConsistencyKitProperties.class && !type.isEnum();
    }

    /** The names of the JavaBean properties of {@code type}, in kebab case: an instance's own properties. */
    static Set<String> propertiesOf(Class<?> type) {
        Set<String> out = new LinkedHashSet<>();
        for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(type)) {
            if (p.getReadMethod() != null && p.getReadMethod().getDeclaringClass() != Object.class) {
                out.add(kebab(p.getName()));
            }
        }
        return out;
    }

    private static void apply(Object builder, Setting s, String key, Object value) {
        try {
            s.setter().invoke(builder, value);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("consistency-kit: " + key + "=" + value + ": "
                    + e.getTargetException().getMessage(), e.getTargetException());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("consistency-kit: " + key + ": " + e.getMessage(), e);
        }
    }

    private static Optional<Method> plainSetter(Class<?> builderType, String name) {
        for (Method m : builderType.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1 && !m.isBridge()
                    && StrategyBuilder.class.isAssignableFrom(m.getReturnType()) && plain(m.getParameterTypes()[0])) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    private static boolean plain(Class<?> type) {
        return type == String.class || type == Duration.class || type.isEnum() || type == int.class
                || type == long.class || type == boolean.class || type == Integer.class || type == Long.class
                || type == Boolean.class;
    }

    /** A setting's name as Spring spells a property: {@code maxPendingPerDocument} is {@code max-pending-per-document}. */
    static String kebab(String name) {
        return DataObjectPropertyName.toDashedForm(name);
    }

    private static String relaxed(String name) {
        return name.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
    }
}
