package dev.consistencykit.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The module graph as the POMs and the test sources declare it: each pattern module depends on core only (and on the
 * testkit for its tests); no test imports another module's {@code internal} package; the embedded server is never a
 * runtime dependency of core or of a pattern module; the BOM lists every published module. The main code's
 * dependencies are checked on compiled classes by {@link ArchitectureTest}.
 */
class ModuleGraphTest {

    /**
     * Applications built on the published artifacts as a user's would be, never published: they may depend on
     * anything an application may (the starter, the patterns, a web server), and nothing depends on them.
     */
    private static final String SAMPLE = "examples/spring-boot-sample";
    /** Package segment after {@code dev.consistencykit.} → module folder. */
    private static final Map<String, String> PACKAGE_TO_MODULE = Map.ofEntries(
            Map.entry("core", "core"), Map.entry("embedded", "embedded-server"), Map.entry("testkit", "testkit"),
            Map.entry("examples", "examples"), Map.entry("cli", "cli"), Map.entry("conformance", "conformance"),
            Map.entry("spring", "spring-boot"),
            Map.entry("syncflag", "sync-flag"), Map.entry("jobqueue", "job-queue"), Map.entry("twophase", "two-phase"),
            Map.entry("logreconciliation", "log-reconciliation"), Map.entry("versioning", "versioning"),
            Map.entry("micrometer", "micrometer"), Map.entry("sample", SAMPLE),
            Map.entry("dashboard", "dashboard"), Map.entry("benchmarks", "benchmarks"));
    private static final Set<String> INFRASTRUCTURE = Set.of("embedded-server", "core", "testkit", "testkit-junit5",
            "examples", "cli", "spring-boot", "spring-boot-starter", "dashboard");
    /** The modules that integrate every pattern into a framework: they may depend on the patterns. */
    private static final Set<String> INTEGRATIONS = Set.of("spring-boot", "spring-boot-starter", "dashboard");
    /**
     * Run from this repository, never published: the examples and the CLI; the peer benchmarks; the conformance
     * suites and driver-floor, which run every pattern's shared contracts (driver-floor on the lowest supported
     * driver), so they depend on every pattern, in test scope only; and these rules, which read every module's
     * classes.
     */
    private static final Set<String> UNPUBLISHED = Set.of("examples", "cli", "conformance", "benchmarks",
            "driver-floor", "architecture");
    private static final Pattern IMPORT = Pattern.compile(
            "^import\\s+(?:static\\s+)?dev\\.consistencykit\\.([a-z]+)((?:\\.[A-Za-z_]+)*)", Pattern.MULTILINE);
    private static final Pattern DEPENDENCY = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);

    private static Path root() {
        return ProjectFiles.root();
    }

    private static String read(Path file) {
        return ProjectFiles.read(file);
    }

    private static List<String> modules() {
        return ProjectFiles.modules();
    }

    private static List<Path> javaFiles(String module, String sourceSet) {
        Path dir = root().resolve(module).resolve("src").resolve(sourceSet).resolve("java");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> f.toString().endsWith(".java")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> violations() {
        List<String> violations = new ArrayList<>();
        for (String module : modules()) {
            boolean pattern = !INFRASTRUCTURE.contains(module);
            for (String sourceSet : List.of("test")) {   // main code: ArchitectureTest, on compiled classes
                for (Path file : javaFiles(module, sourceSet)) {
                    Matcher m = IMPORT.matcher(read(file));
                    while (m.find()) {
                        String imported = m.group(1).equals("testkit") && m.group(2).startsWith(".junit5")
                                ? "testkit-junit5"
                                : PACKAGE_TO_MODULE.getOrDefault(m.group(1), "?" + m.group(1));
                        String where = module + "/" + root().resolve(module).relativize(file) + " imports "
                                + "dev.consistencykit." + m.group(1) + m.group(2);
                        if (imported.equals(module)) {
                            continue;
                        }
                        if (m.group(2).startsWith(".internal")) {
                            violations.add(where + ": another module's internal package");
                        }
                        if (imported.equals("examples") && !module.equals("cli")) {
                            violations.add(where + ": nothing but the CLI may depend on examples");
                        }
                        if (imported.equals("cli")) {
                            violations.add(where + ": nothing may depend on the CLI");
                        }
                        if (imported.equals("benchmarks")) {
                            violations.add(where + ": nothing may depend on the benchmarks");
                        }
                        if (imported.equals(SAMPLE)) {
                            violations.add(where + ": nothing may depend on the sample application");
                        }
                        if (!INFRASTRUCTURE.contains(imported) && !UNPUBLISHED.contains(module)
                                && !INTEGRATIONS.contains(module) && !module.equals(SAMPLE)) {
                            violations.add(where + ": pattern modules are imported by examples, the CLI and the"
                                    + " suites only");
                        }
                        if (module.equals("embedded-server")) {
                            violations.add(where + ": the embedded server depends on no other module");
                        }
                        if (module.equals("core") && !imported.equals("embedded-server")) {
                            violations.add(where + ": core depends on no other module (its tests: the embedded"
                                    + " server)");
                        }
                        if (module.equals("testkit") && !Set.of("core", "embedded-server").contains(imported)) {
                            violations.add(where + ": testkit depends on core and the embedded server only (no test"
                                    + " framework)");
                        }
                        if (module.equals("testkit-junit5") && !Set.of("core", "testkit").contains(imported)) {
                            violations.add(where + ": testkit-junit5 depends on core and testkit only");
                        }
                        if (pattern && sourceSet.equals("main") && !imported.equals("core")) {
                            violations.add(where + ": a pattern's main code depends on core only");
                        }
                    }
                }
            }
        }
        return violations;
    }

    @Test
    void shouldHaveEveryModuleFolderInTheReactor() {
        assertThat(modules()).contains("core", "testkit", "examples");
        for (String module : modules()) {
            assertThat(root().resolve(module).resolve("pom.xml")).exists();
        }
        for (String folder : PACKAGE_TO_MODULE.values()) {
            if (Files.exists(root().resolve(folder).resolve("pom.xml"))) {
                assertThat(modules()).as("module folder " + folder + " is built").contains(folder);
            }
        }
    }

    @Test
    void shouldImportNoOtherModulesInternalsAndNoPatternFromAnother() {
        assertThat(violations()).isEmpty();
    }

    @Test
    void shouldNeverShipEmbeddedServerWithCoreOrPattern() {
        Set<String> offenders = new TreeSet<>();
        for (String module : modules()) {
            if (module.startsWith("testkit") || module.equals("examples") || module.equals("cli")
                    || module.equals("bom")
                    || module.equals("embedded-server") || INTEGRATIONS.contains(module) || module.equals(SAMPLE)
                    || module.equals("benchmarks")) {
                // the BOM only manages versions: it lists every module and depends on none; the examples, the CLI
                // and the benchmarks run every pattern on the embedded server from this repository
                continue;
            }
            if (UNPUBLISHED.contains(module)) {
                Matcher m = DEPENDENCY.matcher(read(root().resolve(module).resolve("pom.xml"))
                        .replaceFirst("(?s)<dependencyManagement>.*?</dependencyManagement>", "")
                        .replaceFirst("(?s)<build>.*", ""));
                while (m.find()) {
                    if (!m.group(1).contains("<scope>test</scope>")) {
                        offenders.add(module + ": a test-only module with a dependency outside test scope: "
                                + m.group(1).strip());
                    }
                }
                continue;
            }
            Matcher m = DEPENDENCY.matcher(read(root().resolve(module).resolve("pom.xml")));
            while (m.find()) {
                String dependency = m.group(1);
                boolean testScoped = dependency.contains("<scope>test</scope>");
                if (dependency.contains("mongo-java-server") && !testScoped) {
                    offenders.add(module + ": mongo-java-server outside test scope");
                }
                if (dependency.contains("consistency-kit-testkit") && !testScoped) {
                    offenders.add(module + ": testkit outside test scope");
                }
                if (dependency.contains("consistency-kit-embedded-server") && !testScoped) {
                    offenders.add(module + ": the embedded server outside test scope");
                }
                if (dependency.contains("<artifactId>consistency-kit-") && !dependency.contains("-core<")
                        && !dependency.contains("-testkit<") && !dependency.contains("-testkit-junit5<")
                        && !dependency.contains("-embedded-server<")) {
                    offenders.add(module + ": depends on another pattern or examples: " + dependency.strip());
                }
            }
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void shouldDetectInternalImportWhenOneExists() {
        // the rule must be able to fail: run its matcher on a line that breaks it
        Matcher m = IMPORT.matcher("import dev.consistencykit.twophase.internal.Driver;\n");
        assertThat(m.find()).isTrue();
        assertThat(m.group(1)).isEqualTo("twophase");
        assertThat(m.group(2)).startsWith(".internal");
    }

    @Test
    void shouldListEveryPublishedModuleInTheBomAtTheReactorsVersion() {
        String bom = read(root().resolve("bom").resolve("pom.xml"));
        String parent = read(root().resolve("pom.xml"));
        Matcher version = Pattern.compile("<artifactId>consistency-kit-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(parent);
        assertThat(version.find()).isTrue();
        assertThat(bom).contains("<artifactId>consistency-kit-bom</artifactId>\n  <version>" + version.group(1)
                + "</version>");
        for (String module : modules()) {
            if (module.equals("bom")) {
                continue;
            }
            String pom = read(root().resolve(module).resolve("pom.xml"));
            if (UNPUBLISHED.contains(module) || module.equals(SAMPLE)) {
                assertThat(pom).contains("<maven.deploy.skip>true</maven.deploy.skip>");
                assertThat(bom).doesNotContain("consistency-kit-" + module.substring(module.lastIndexOf('/') + 1));
                continue;
            }
            Matcher artifact = Pattern.compile("<artifactId>(consistency-kit-[a-z-]+)</artifactId>")
                    .matcher(read(root().resolve(module).resolve("pom.xml")).replaceFirst(
                            "(?s)<parent>.*?</parent>", ""));
            assertThat(artifact.find()).as(module).isTrue();
            assertThat(bom).as("the BOM lists " + artifact.group(1)).contains("<artifactId>" + artifact.group(1)
                    + "</artifactId>");
        }
    }

    @Test
    void shouldGiveEveryJarAnAutomaticModuleName() {
        for (String module : modules()) {
            if (module.equals("bom")) {
                continue;
            }
            assertThat(read(root().resolve(module).resolve("pom.xml"))).as(module)
                    .containsPattern("<automatic.module.name>dev\\.consistencykit\\.[a-z]+(\\.[a-z0-9]+)?</automatic.module.name>");
        }
    }

    @Test
    void shouldNameEveryFixedFaultSiteInTestsByWhatItIs() {
        // a site picked by a literal ordinal shifts when the code under test gains a write; a loop over
        // every site (at(site, ...)) is fine, and the injector's own tests and samples show the ordinal API
        Pattern ordinal = Pattern.compile("FaultInjector\\s*\\.at\\(\\s*\\d");
        Set<String> allowed = Set.of("FaultInjectorTest.java", "JavadocSamplesTest.java");
        List<String> found = new ArrayList<>();
        for (String module : modules()) {
            for (Path file : javaFiles(module, "test")) {
                if (!allowed.contains(file.getFileName().toString()) && ordinal.matcher(read(file)).find()) {
                    found.add(module + "/" + root().resolve(module).relativize(file));
                }
            }
        }
        assertThat(found).as("use FaultInjector.atWrite(method, collection, occurrence, mode)").isEmpty();
    }
}
