package dev.consistencykit.examples.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the samples' sources and the documents that show them. A sample is the code between
 * {@code // README:start [name]} and {@code // README:end} in a file of this package; the README shows it after a
 * line {@code <!-- sample: File[#name] -->}, preceded by the imports its code uses, in the file's order.
 */
final class SampleSources {

    private static final Pattern START = Pattern.compile("^(\\s*)// README:start(?: (\\S+))?$");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?[\\w.]+\\.(\\w+);$");
    private static final Pattern MARKER = Pattern.compile("<!-- sample: ([\\w#-]+) -->\\n```java\\n(.*?)```",
            Pattern.DOTALL);

    private SampleSources() {
    }

    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.exists(dir.resolve("examples").resolve("pom.xml")) && Files.exists(dir.resolve("README.md"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("repository root not found above " + Path.of("").toAbsolutePath());
    }

    static Path samplesDirectory() {
        return root().resolve("examples/src/test/java/dev/consistencykit/examples/samples");
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every sample, by {@code File} or {@code File#name}, rendered as a document shows it. */
    static Map<String, String> rendered() {
        Map<String, String> samples = new LinkedHashMap<>();
        try (var files = Files.list(samplesDirectory())) {
            for (Path file : files.sorted().toList()) {
                String fileName = file.getFileName().toString();
                if (fileName.endsWith(".java")) {
                    samples.putAll(render(fileName.substring(0, fileName.length() - 5), read(file)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return samples;
    }

    static Map<String, String> render(String className, String source) {
        Map<String, String> samples = new LinkedHashMap<>();
        List<String> lines = source.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            Matcher start = START.matcher(lines.get(i));
            if (!start.matches()) {
                continue;
            }
            int indent = start.group(1).length();
            List<String> body = new ArrayList<>();
            int j = i + 1;
            while (!lines.get(j).strip().equals("// README:end")) {
                String line = lines.get(j);
                body.add(line.length() >= indent ? line.substring(indent) : line.strip());
                j++;
            }
            String code = String.join("\n", body);
            String key = start.group(2) == null ? className : className + "#" + start.group(2);
            samples.put(key, importsUsedBy(lines, code) + code + "\n");
            i = j;
        }
        return samples;
    }

    private static String importsUsedBy(List<String> lines, String code) {
        StringBuilder out = new StringBuilder();
        boolean groupOpen = false;
        for (String line : lines) {
            if (line.startsWith("public ") || line.startsWith("final ") || line.startsWith("/**")) {
                break;
            }
            Matcher m = IMPORT.matcher(line);
            if (m.matches() && Pattern.compile("\\b" + m.group(1) + "\\b").matcher(code).find()) {
                out.append(line).append('\n');
                groupOpen = true;
            } else if (line.isBlank() && groupOpen) {
                out.append('\n');
                groupOpen = false;
            }
        }
        String imports = out.toString().stripTrailing();
        return imports.isEmpty() ? "" : imports + "\n\n";
    }

    /** The samples a Markdown text shows: marker → the code block after it. */
    static Map<String, String> shownIn(String markdown) {
        Map<String, String> shown = new LinkedHashMap<>();
        Matcher m = MARKER.matcher(markdown);
        while (m.find()) {
            shown.put(m.group(1), m.group(2));
        }
        return shown;
    }

    /** {@code markdown} with every marked code block replaced by its sample as rendered now. */
    static String updated(String markdown, Map<String, String> samples) {
        Matcher m = MARKER.matcher(markdown);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String sample = samples.get(m.group(1));
            String replacement = sample == null ? m.group()
                    : "<!-- sample: " + m.group(1) + " -->\n```java\n" + sample + "```";
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** How many {@code ```java} blocks a Markdown text has. */
    static int javaBlocks(String markdown) {
        return (int) markdown.lines().filter(l -> l.strip().equals("```java")).count();
    }
}
