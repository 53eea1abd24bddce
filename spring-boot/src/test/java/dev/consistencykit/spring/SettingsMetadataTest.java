package dev.consistencykit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.ParameterizedType;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;

/**
 * What an IDE reads to complete and describe the properties: the {@code META-INF/spring-configuration-metadata.json}
 * the build wrote (the annotation processor's entries, then {@link SettingsMetadata}'s) has an entry for every
 * property an instance binds — each pattern's settings as {@link InstanceSettings} enumerates them for the binder, and
 * each property of the instances' own classes — with its type, a description and, where the pattern has one, its
 * default. It is read from the class path, as an IDE reads it from the jar.
 */
class SettingsMetadataTest {

    @Test
    void shouldDescribeEverySettingOfEveryPatternWithItsTypeDescriptionAndDefault() throws IOException {
        Map<String, Document> entries = entries();

        for (InstanceBuilders.Kind kind : InstanceBuilders.KINDS) {
            for (InstanceSettings.Setting s : InstanceSettings.settings(kind.builderType(), kind.configType())) {
                String name = "consistency-kit." + kind.key() + ".*." + s.property();
                assertThat(entries).as("metadata of %s", name).containsKey(name);
                Document entry = entries.get(name);
                assertThat(entry.getString("type")).as(name).isEqualTo(s.type().getName());
                assertThat(entry.getString("description")).as("description of %s", name).isNotBlank()
                        .doesNotContain("{@", "Returns ");
                assertThat(entry.getString("sourceType")).as(name).isEqualTo(kind.configType().getName());
            }
        }
        assertThat(entries.get("consistency-kit.two-phase.*.lease").get("defaultValue")).isEqualTo("30s");
        assertThat(entries.get("consistency-kit.job-queue.*.max-attempts").get("defaultValue")).isEqualTo(5);
        assertThat(entries.get("consistency-kit.ledger.*.seq-allocation").get("defaultValue")).isEqualTo("query");
        assertThat(entries.get("consistency-kit.versioning.*.name").get("defaultValue")).isEqualTo("versioning");
    }

    @Test
    void shouldDescribeEveryPropertyOfTheInstancesOwnClassesAtEveryDepth() throws IOException {
        Map<String, Document> entries = entries();

        for (InstanceBuilders.Kind kind : InstanceBuilders.KINDS) {
            Set<String> expected = new TreeSet<>();
            walk("consistency-kit." + kind.key() + ".*", kind.ownType(), expected);
            assertThat(entries.keySet()).as(kind.key()).containsAll(expected);
            expected.forEach(name -> assertThat(entries.get(name).getString("description"))
                    .as("description of %s", name).isNotBlank());
        }
        assertThat(entries).containsKeys("consistency-kit.job-queue.*.retry-policy.max-attempts",
                "consistency-kit.job-queue.*.schedules.*.cron", "consistency-kit.sync-flag.*.targets[*].id-field",
                "consistency-kit.sync-flag.*.targets[*].copies");
        assertThat(entries.get("consistency-kit.job-queue.*.workers").getString("type")).isEqualTo("java.lang.Integer");
    }

    @Test
    void shouldListEveryPatternThePropertiesHold() {
        Set<String> maps = new TreeSet<>();
        for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(ConsistencyKitProperties.class)) {
            if (p.getReadMethod() != null && p.getReadMethod().getGenericReturnType() instanceof ParameterizedType t
                    && t.getActualTypeArguments().length == 2 && t.getActualTypeArguments()[1] instanceof Class<?> v
                    && ConsistencyKitProperties.Instance.class.isAssignableFrom(v)) {
                maps.add(InstanceSettings.kebab(p.getName()));
            }
        }

        assertThat(InstanceBuilders.KINDS).extracting(InstanceBuilders.Kind::key).containsExactlyInAnyOrderElementsOf(
                maps);
    }

    /** The names of the plain properties below {@code prefix}, walked independently of the writer's walk. */
    private static void walk(String prefix, Class<?> type, Set<String> out) {
        for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(type)) {
            if (p.getReadMethod() == null || p.getReadMethod().getDeclaringClass() == Object.class) {
                continue;
            }
            String property = InstanceSettings.kebab(p.getName());
            Class<?> raw = p.getPropertyType();
            String name = prefix + "." + property;
            if (InstanceSettings.group(raw)) {
                walk(name, raw, out);
            } else if (p.getReadMethod().getGenericReturnType() instanceof ParameterizedType t
                    && t.getActualTypeArguments()[t.getActualTypeArguments().length - 1] instanceof Class<?> e
                    && InstanceSettings.group(e)) {
                walk(name + (List.class.isAssignableFrom(raw) ? "[*]" : ".*"), e, out);
            } else {
                out.add(name);
            }
        }
    }

    /** Every metadata entry of the class path that names a property of this starter, by name. */
    private static Map<String, Document> entries() throws IOException {
        Map<String, Document> out = new LinkedHashMap<>();
        for (URL url : Collections.list(SettingsMetadataTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                Document metadata = Document.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                for (Document p : metadata.getList("properties", Document.class, List.of())) {
                    if (p.getString("name").startsWith("consistency-kit.")) {
                        out.put(p.getString("name"), p);
                    }
                }
            }
        }
        return out;
    }
}
