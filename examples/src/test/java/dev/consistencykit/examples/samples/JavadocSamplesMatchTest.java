package dev.consistencykit.examples.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every {@code <pre>} code block (the usage examples) in the published modules' public Javadoc is code that a test
 * compiles and runs: its lines, each stripped of indentation, appear in that order in a test source of the repository
 * (most of them in {@link JavadocSamplesTest}, between {@code // javadoc:start <source>} and {@code // javadoc:end}).
 * Run with {@code -Dsamples.update=true} to rewrite each marked Javadoc block from its region.
 */
class JavadocSamplesMatchTest {

    private static final Pattern BLOCK = Pattern.compile("(?m)^(\\s*\\*\\s*)<pre>\\{@code\\n(.*?)^\\s*\\*\\s*}</pre>",
            Pattern.DOTALL);
    private static final Pattern REGION = Pattern.compile(
            "(?m)^([ \\t]*)// javadoc:start (\\S+)\\n(.*?)^[ \\t]*// javadoc:end$", Pattern.DOTALL);

    private static List<Path> javaFiles(String sourceSet) throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> modules = Files.list(SampleSources.root())) {
            for (Path module : modules.sorted().toList()) {
                Path dir = module.resolve("src").resolve(sourceSet).resolve("java");
                if (Files.isDirectory(dir) && !(sourceSet.equals("main") && module.endsWith("examples"))) {
                    try (Stream<Path> walk = Files.walk(dir)) {
                        walk.filter(f -> f.toString().endsWith(".java")).sorted().forEach(files::add);
                    }
                }
            }
        }
        return files;
    }

    /** The code lines of each Javadoc block of the published main sources, outside {@code internal} packages. */
    private static Map<String, List<String>> javadocBlocks() throws IOException {
        Map<String, List<String>> blocks = new LinkedHashMap<>();
        for (Path file : javaFiles("main")) {
            if (file.toString().contains("/internal/")) {
                continue;
            }
            Matcher m = BLOCK.matcher(SampleSources.read(file));
            int n = 0;
            while (m.find()) {
                List<String> lines = m.group(2).lines().map(l -> l.replaceFirst("^\\s*\\*", "").strip()).toList();
                blocks.put(SampleSources.root().relativize(file) + "#" + n++, lines);
            }
        }
        return blocks;
    }

    private static boolean containsInOrder(List<String> haystack, List<String> needle) {
        for (int i = 0; i + needle.size() <= haystack.size(); i++) {
            if (haystack.subList(i, i + needle.size()).equals(needle)) {
                return true;
            }
        }
        return false;
    }

    private static void updateJavadocFromRegions(List<Path> testFiles) throws IOException {
        for (Path testFile : testFiles) {
            Matcher region = REGION.matcher(SampleSources.read(testFile));
            while (region.find()) {
                int indent = region.group(1).length();
                Path source = SampleSources.root().resolve(region.group(2));
                String text = SampleSources.read(source);
                Matcher block = BLOCK.matcher(text);
                assertThat(block.find()).as(source + " has a <pre>{@code block").isTrue();
                String prefix = block.group(1);
                StringBuilder code = new StringBuilder();
                for (String line : region.group(3).lines().toList()) {
                    String body = line.length() >= indent ? line.substring(indent) : line.strip();
                    code.append((prefix.stripTrailing() + " " + body).stripTrailing()).append('\n');
                }
                String replaced = prefix + "<pre>{@code\n" + code + prefix + "}</pre>";
                Files.writeString(source, text.substring(0, block.start()) + replaced + text.substring(block.end()));
            }
        }
    }

    @Test
    void shouldFindEveryJavadocExampleInATestThatRuns() throws IOException {
        List<Path> testFiles = javaFiles("test");
        if (Boolean.getBoolean("samples.update")) {
            updateJavadocFromRegions(testFiles);
        }
        List<List<String>> tests = new ArrayList<>();
        for (Path file : testFiles) {
            tests.add(SampleSources.read(file).lines().map(String::strip).toList());
        }
        Map<String, List<String>> blocks = javadocBlocks();
        List<String> missing = new ArrayList<>();
        blocks.forEach((where, lines) -> {
            if (tests.stream().noneMatch(t -> containsInOrder(t, lines))) {
                missing.add(where + ":\n  " + String.join("\n  ", lines));
            }
        });
        assertThat(blocks).hasSizeGreaterThan(20);
        assertThat(missing).as("Javadoc examples that no test compiles and runs (write each as a region of "
                + "JavadocSamplesTest, then run with -Dsamples.update=true)").isEmpty();
    }
}
