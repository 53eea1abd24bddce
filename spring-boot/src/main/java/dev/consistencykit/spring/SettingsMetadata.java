package dev.consistencykit.spring;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.springframework.beans.BeanUtils;
import org.springframework.util.ClassUtils;

import dev.consistencykit.core.StrategyConfig;

/**
 * The configuration metadata of every instance property, written into the module's
 * {@code META-INF/spring-configuration-metadata.json} at build time (the {@code process-classes} phase runs
 * {@link #main}), beside what Spring's annotation processor wrote there: every setting of every pattern, enumerated by
 * {@link InstanceSettings#settings} as the binder enumerates them, and every property of the instances' own classes,
 * walked as {@link InstanceSettings#refuseUnknownBelow} walks them. So a setting added to a pattern's configuration
 * appears here with no edit. Each entry has the property's name, its type, its default (read from a default
 * configuration) and its description (the Javadoc of the configuration's accessor, or of the property's field, read
 * from the sources).
 *
 * <p>An instance's name is a key of a map, which Spring's metadata format has no way to name (spring-boot#9945); the
 * entries write it {@code *}, as Spring Boot's own documentation writes a map's key, and a list's index {@code [*]}:
 * {@code consistency-kit.two-phase.*.lease}, {@code consistency-kit.sync-flag.*.targets[*].collection}.
 */
final class SettingsMetadata {

    /** Where this writer's entries are told apart from the annotation processor's: a map key or list index. */
    static final String ANY_KEY = "*";

    private static final Pattern CLASS = Pattern.compile("\\bclass\\s+(\\w+)");

    private SettingsMetadata() {
    }

    /**
     * Adds the entries to a metadata file.
     *
     * @param args the metadata file, then the folder whose modules' {@code src/main/java} hold the sources
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: SettingsMetadata METADATA_JSON SOURCES_ROOT");
        }
        Path file = Path.of(args[0]);
        Sources sources = new Sources(Path.of(args[1]));
        Document metadata = Files.exists(file)
                ? Document.parse(Files.readString(file, StandardCharsets.UTF_8)) : new Document();
        List<Object> properties = new ArrayList<>();
        for (Object p : metadata.getList("properties", Object.class, List.of())) {
            if (!(p instanceof Document d && d.getString("name").contains(ANY_KEY))) {
                properties.add(p);
            }
        }
        properties.addAll(entries(sources));
        metadata.put("properties", properties);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, metadata.toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(true)
                .build()), StandardCharsets.UTF_8);
    }

    /** Every entry: each instance property of each pattern, in the order the patterns and their settings are declared. */
    static List<Document> entries(Sources sources) {
        List<Document> out = new ArrayList<>();
        for (InstanceBuilders.Kind kind : InstanceBuilders.KINDS) {
            String prefix = "consistency-kit." + kind.key() + "." + ANY_KEY;
            StrategyConfig defaults = defaults(kind.configType());
            for (InstanceSettings.Setting s : InstanceSettings.settings(kind.builderType(), kind.configType())) {
                Document entry = entry(prefix + "." + s.property(), s.type().getName(),
                        sources.accessorDoc(kind.configType(), s.field()), kind.configType());
                defaultValue(s.field(), defaults).ifPresent(v -> entry.append("defaultValue", v));
                out.add(entry);
            }
            own(out, sources, prefix, kind.ownType());
        }
        return out;
    }

    private static void own(List<Document> out, Sources sources, String prefix, Class<?> type) {
        Object defaults = BeanUtils.instantiateClass(type);
        for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(type)) {
            if (p.getReadMethod() == null || p.getReadMethod().getDeclaringClass() == Object.class) {
                continue;
            }
            String name = prefix + "." + InstanceSettings.kebab(p.getName());
            Class<?> raw = p.getPropertyType();
            Type generic = p.getReadMethod().getGenericReturnType();
            Class<?> element = element(raw, generic);
            if (InstanceSettings.group(raw)) {
                own(out, sources, name, raw);
            } else if (element != null && InstanceSettings.group(element)) {
                own(out, sources, name + (List.class.isAssignableFrom(raw) ? "[" + ANY_KEY + "]" : "." + ANY_KEY),
                        element);
            } else {
                String typeName = generic instanceof Class<?> c ? ClassUtils.resolvePrimitiveIfNecessary(c).getName()
                        : generic.getTypeName().replace(", ", ",");
                Document entry = entry(name, typeName,
                        sources.fieldDoc(p.getReadMethod().getDeclaringClass(), p.getName()),
                        p.getReadMethod().getDeclaringClass());
                plainDefault(invoke(p.getReadMethod(), defaults)).ifPresent(v -> entry.append("defaultValue", v));
                out.add(entry);
            }
        }
    }

    /** The element type of a list, or the value type of a map; null for anything else. */
    private static Class<?> element(Class<?> raw, Type generic) {
        if (!(generic instanceof ParameterizedType parameterized)) {
            return null;
        }
        Type[] arguments = parameterized.getActualTypeArguments();
        if (List.class.isAssignableFrom(raw) && arguments[0] instanceof Class<?> c) {
            return c;
        }
        return Map.class.isAssignableFrom(raw) && arguments[1] instanceof Class<?> c ? c : null;
    }

    private static Document entry(String name, String type, String description, Class<?> source) {
        Document entry = new Document("name", name).append("type", type);
        if (!description.isEmpty()) {
            entry.append("description", description);
        }
        return entry.append("sourceType", source.getName());
    }

    private static StrategyConfig defaults(Class<? extends StrategyConfig> type) {
        try {
            Constructor<? extends StrategyConfig> constructor = type.getDeclaredConstructor();
            constructor.setAccessible(true);
            return constructor.newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no default " + type.getName() + ": " + e, e);
        }
    }

    private static Optional<Object> defaultValue(String field, StrategyConfig defaults) {
        for (Class<?> c = defaults.getClass(); c != Object.class; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(field);
                f.setAccessible(true);
                return plainDefault(f.get(defaults));
            } catch (NoSuchFieldException e) {
                // declared higher up
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read " + field + ": " + e, e);
            }
        }
        return Optional.empty();
    }

    /** A default as the metadata writes it: durations as Spring reads them ({@code 30s}), enums by name. */
    static Optional<Object> plainDefault(Object value) {
        if (value instanceof Duration d) {
            return Optional.of(duration(d));
        }
        if (value instanceof Enum<?> e) {
            return Optional.of(e.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        }
        if ((value instanceof List<?> list && list.isEmpty()) || (value instanceof Map<?, ?> map && map.isEmpty())) {
            return Optional.empty();
        }
        return value instanceof String || value instanceof Number || value instanceof Boolean
                ? Optional.of(value) : Optional.empty();
    }

    private static String duration(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0 && ms > 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms > 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1_000 == 0 ? ms / 1_000 + "s" : ms + "ms";
    }

    private static Object invoke(Method getter, Object target) {
        try {
            return getter.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + getter + ": " + e, e);
        }
    }

    /** The Javadoc of the library's sources, by class and member. */
    static final class Sources {

        private final Path root;

        /** @param root the folder whose modules' {@code src/main/java} hold the sources */
        Sources(Path root) {
            this.root = root;
        }

        /** The Javadoc of {@code type}'s (or a superclass's) accessor {@code field()}, as a description. */
        String accessorDoc(Class<?> type, String field) {
            for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
                String doc = doc(c, "public\\s+(?:final\\s+)?[\\w.<>?, ]+\\s+" + field + "\\(\\)");
                if (!doc.isEmpty()) {
                    return describe(doc.replaceFirst("^Returns ", ""), c);
                }
            }
            return "";
        }

        /** The Javadoc of {@code type}'s field {@code field}, as a description. */
        String fieldDoc(Class<?> type, String field) {
            return describe(doc(type, "private\\s+(?:final\\s+)?[\\w.<>?, ]+\\s+" + field + "\\s*[=;]"), type);
        }

        private String doc(Class<?> type, String member) {
            Optional<String> source = source(type);
            if (source.isEmpty()) {
                return "";
            }
            String text = source.get();
            int from = 0;
            if (type.getEnclosingClass() != null) {
                Matcher m = Pattern.compile("\\bclass\\s+" + type.getSimpleName() + "\\b").matcher(text);
                from = m.find() ? m.end() : 0;
            }
            Matcher m = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*(?:@\\w+\\s*)*" + member, Pattern.DOTALL)
                    .matcher(text);
            if (!m.find(from)) {
                return "";
            }
            // a member of a nested class further down must not lend its Javadoc to this one
            Matcher nested = CLASS.matcher(text.substring(from, m.start()));
            if (type.getEnclosingClass() != null && nested.find()) {
                return "";
            }
            return m.group(1).replaceAll("(?m)^\\s*\\*\\s?", " ").replaceAll("\\s+", " ").strip();
        }

        private Optional<String> source(Class<?> type) {
            Class<?> top = type;
            while (top.getEnclosingClass() != null) {
                top = top.getEnclosingClass();
            }
            String relative = top.getName().replace('.', '/') + ".java";
            try (Stream<Path> modules = Files.list(root)) {
                for (Path module : modules.toList()) {
                    Path file = module.resolve("src/main/java").resolve(relative);
                    if (Files.isRegularFile(file)) {
                        return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return Optional.empty();
        }

        /** Javadoc as plain text: inline tags by their text, {@code {@value #X}} by the constant's value. */
        private static String describe(String doc, Class<?> type) {
            Matcher values = Pattern.compile("\\{@value\\s+#(\\w+)}").matcher(doc);
            StringBuilder out = new StringBuilder();
            while (values.find()) {
                values.appendReplacement(out, Matcher.quoteReplacement(constant(type, values.group(1))));
            }
            values.appendTail(out);
            String text = out.toString()
                    .replaceAll("\\{@(?:link|linkplain)\\s+[\\w.]*#?(\\w+)(?:\\([^)]*\\))?\\s+([^}]*)}", "$2")
                    .replaceAll("\\{@(?:link|linkplain)\\s+[\\w.]*#?(\\w+)(?:\\([^)]*\\))?}", "$1")
                    .replaceAll("\\{@(?:code|literal)\\s+([^}]*)}", "$1")
                    .replaceAll("<[^>]+>", "").strip();
            return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
        }

        private static String constant(Class<?> type, String name) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                try {
                    Field f = c.getDeclaredField(name);
                    if (Modifier.isStatic(f.getModifiers())) {
                        f.setAccessible(true);
                        return String.valueOf(f.get(null));
                    }
                } catch (NoSuchFieldException e) {
                    // declared higher up
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("cannot read " + name + ": " + e, e);
                }
            }
            return name;
        }
    }
}
