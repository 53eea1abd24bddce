package dev.consistencykit.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The reactor's files as the rules read them: its root, its modules as the parent POM lists them, a file's text. */
final class ProjectFiles {

    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

    private ProjectFiles() {
    }

    /** The reactor's root: the nearest folder above this one whose POM is the parent with modules. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path pom = dir.resolve("pom.xml");
            if (Files.exists(pom) && read(pom).contains("<modules>")
                    && read(pom).contains("<artifactId>consistency-kit-parent</artifactId>")) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("reactor root not found above " + Path.of("").toAbsolutePath());
    }

    /** The modules the parent POM lists, as folders under the root, in its order. */
    static List<String> modules() {
        List<String> modules = new ArrayList<>();
        Matcher m = MODULE.matcher(read(root().resolve("pom.xml")));
        while (m.find()) {
            modules.add(m.group(1).trim());
        }
        return modules;
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
