package dev.consistencykit.architecture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.jar.JarFile;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * What a publication to Maven Central needs, checked on every {@code ./mvnw verify}: each published POM (the parent,
 * the BOM and every module without {@code maven.deploy.skip}) has its name, description, url, license, developer and
 * scm, as written or inherited from the parent; each published jar module has, beside its jar, a sources jar of its
 * sources and a Javadoc jar of its public packages (no {@code internal} one), each with {@code Automatic-Module-Name}
 * (a module without code, the starter, both with a README).
 * The jars are checked where this build made them (this module runs after every published one: its test
 * dependencies); signatures are the {@code sign} profile's, with a key (docs/releasing.md).
 */
class ReleaseBundleTest {

    private static final List<String> INHERITED = List.of("url", "licenses/license/name", "developers/developer/name",
            "scm/url", "scm/connection");

    @Test
    void shouldGiveEveryPublishedPomWhatCentralRequires() {
        Element parent = pom(ProjectFiles.root().resolve("pom.xml"));
        List<String> problems = new ArrayList<>(missing("the parent POM", parent, null));
        for (String module : published()) {
            Element pom = pom(ProjectFiles.root().resolve(module).resolve("pom.xml"));
            boolean inherits = text(pom, "parent/artifactId").isPresent();
            problems.addAll(missing(module, pom, inherits ? parent : null));
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void shouldPutSourcesAndJavadocBesideEveryPublishedJar() throws IOException {
        String version = text(pom(ProjectFiles.root().resolve("pom.xml")), "version").orElseThrow();
        List<String> checked = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (String module : published()) {
            Element pom = pom(ProjectFiles.root().resolve(module).resolve("pom.xml"));
            if (text(pom, "packaging").orElse("jar").equals("pom")) {
                continue;
            }
            String artifact = text(pom, "artifactId").orElseThrow();
            Path target = ProjectFiles.root().resolve(module).resolve("target");
            Path jar = target.resolve(artifact + "-" + version + ".jar");
            if (!Files.exists(jar)) {
                continue;   // not packaged in this build (./mvnw test)
            }
            checked.add(module);
            // a module without code (the starter) publishes both with a README, as Central asks of such a module
            boolean code = Files.isDirectory(ProjectFiles.root().resolve(module).resolve("src/main/java"));
            for (String classifier : List.of("", "-sources", "-javadoc")) {
                Path file = target.resolve(artifact + "-" + version + classifier + ".jar");
                if (!Files.exists(file)) {
                    problems.add(module + ": no " + file.getFileName());
                    continue;
                }
                try (JarFile content = new JarFile(file.toFile())) {
                    if (content.getManifest() == null
                            || content.getManifest().getMainAttributes().getValue("Automatic-Module-Name") == null) {
                        problems.add(file.getFileName() + ": no Automatic-Module-Name");
                    }
                    if (!code && !classifier.isEmpty() && content.getEntry("README.txt") == null) {
                        problems.add(file.getFileName() + ": no README.txt");
                    }
                    if (code && classifier.equals("-sources")
                            && content.stream().noneMatch(e -> e.getName().endsWith(".java"))) {
                        problems.add(file.getFileName() + ": no source file");
                    }
                    if (code && classifier.equals("-javadoc")) {
                        if (content.getEntry("index.html") == null) {
                            problems.add(file.getFileName() + ": no index.html");
                        }
                        content.stream().filter(e -> e.getName().contains("/internal/")).findFirst()
                                .ifPresent(e -> problems.add(file.getFileName() + ": documents " + e.getName()));
                    }
                }
            }
        }
        assumeTrue(!checked.isEmpty(), "no published module was packaged in this build (run ./mvnw verify)");
        assertThat(problems).isEmpty();
    }

    /** Every module of the reactor that is published: the BOM and each module without {@code maven.deploy.skip}. */
    private static List<String> published() {
        return ProjectFiles.modules().stream()
                .filter(m -> !ProjectFiles.read(ProjectFiles.root().resolve(m).resolve("pom.xml"))
                        .contains("<maven.deploy.skip>true</maven.deploy.skip>"))
                .toList();
    }

    private static List<String> missing(String name, Element pom, Element parent) {
        List<String> problems = new ArrayList<>();
        for (String path : List.of("name", "description")) {
            if (text(pom, path).isEmpty()) {
                problems.add(name + ": no " + path);
            }
        }
        for (String path : INHERITED) {
            if (text(pom, path).isEmpty() && (parent == null || text(parent, path).isEmpty())) {
                problems.add(name + ": no " + path + (parent == null ? "" : ", nor in the parent"));
            }
        }
        return problems;
    }

    private static Element pom(Path file) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ParserConfigurationException | SAXException e) {
            throw new IllegalStateException("cannot read " + file, e);
        }
    }

    /** The text of the first element at {@code path} (child names separated by /) under the project, if not blank. */
    private static Optional<String> text(Element project, String path) {
        Element at = project;
        for (String name : path.split("/", -1)) {
            Element next = null;
            for (Node child = at.getFirstChild(); child != null && next == null; child = child.getNextSibling()) {
                if (child instanceof Element element && element.getTagName().equals(name)) {
                    next = element;
                }
            }
            if (next == null) {
                return Optional.empty();
            }
            at = next;
        }
        String text = at.getTextContent().strip();
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }
}
