package dev.consistencykit.driverfloor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.google.common.base.Splitter;

import dev.consistencykit.core.UnsafeConfigurationException;
import dev.consistencykit.core.spi.DriverFloor;

/**
 * With a driver older than the floor on the class path (what an older Spring Boot line manages), building an entry
 * type fails with one line naming the version found and the floor, not with a {@code NoClassDefFoundError}.
 */
class BelowFloorTest {

    @Test
    void shouldNameTheOldDriverInOneLineWhenAnEntryTypeIsBuilt() throws Exception {
        String version = System.getProperty("below-floor.version");
        List<String> classPath = new ArrayList<>();
        for (String entry : Splitter.on(File.pathSeparatorChar).split(System.getProperty("java.class.path"))) {
            String name = Path.of(entry).getFileName().toString();
            if (!(name.startsWith("mongodb-driver-") || name.startsWith("bson-") || name.equals("bson.jar"))) {
                classPath.add(entry);
            }
        }
        try (Stream<Path> jars = Files.list(Path.of(System.getProperty("below-floor.dir")))) {
            jars.forEach(jar -> classPath.add(jar.toString()));
        }
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", String.join(File.pathSeparator, classPath), BelowFloorMain.class.getName())
                .redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(output).contains(UnsafeConfigurationException.class.getName())
                .contains("the class path holds " + version).contains(DriverFloor.MINIMUM)
                .doesNotContain("NoClassDefFoundError");
    }
}
