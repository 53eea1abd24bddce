package dev.consistencykit.cli.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM (what {@code timeout}, {@code kill} and CI runners send) and SIGKILL to a soak's own process: it ends its
 * server and every worker, says what it did, and exits 130; killed outright, its children end on their own.
 */
class SoakSignalTest {

    /** Starts {@code consistency-kit soak} in a JVM of its own and waits until its server and its 3 workers run. */
    private static Process soakWithChildren(Path out) throws Exception {
        ProcessBuilder builder = Soak.processBuilder(List.of("soak", "--seconds", "600"), "signal-test-soak", null)
                .redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(new File(out + ".err")));
        // the soak's own server process is one of the children this test follows: never a server given by URI
        builder.environment().remove("MONGODB_URI");
        Process soak = builder.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (soak.descendants().count() < 4 && System.nanoTime() < deadline && soak.isAlive()) {
            TimeUnit.MILLISECONDS.sleep(100);   // waiting for processes to exist, not for time to pass
        }
        assertThat(soak.descendants().count()).as("a server and three workers").isGreaterThanOrEqualTo(4);
        return soak;
    }

    private static void assertAllEnded(List<ProcessHandle> children) throws Exception {
        for (ProcessHandle child : children) {
            child.onExit().get(60, TimeUnit.SECONDS);
            assertThat(child.isAlive()).as("child " + child.pid()).isFalse();
        }
    }

    @Test
    void shouldEndEveryChildAndSayWhatWasDoneWhenTerminated(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("soak.out");
        Process soak = soakWithChildren(out);
        List<ProcessHandle> children = new ArrayList<>(soak.descendants().toList());

        soak.destroy();   // SIGTERM
        assertThat(soak.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(soak.exitValue()).isEqualTo(130);
        assertThat(Files.readString(out, StandardCharsets.UTF_8)).contains("soak interrupted after")
                .contains("every worker stopped; recovery run; 0 invariant violations; the server stopped");
        assertAllEnded(children);
    }

    @Test
    void shouldLeaveNoChildBehindWhenKilledOutright(@TempDir Path dir) throws Exception {
        Process soak = soakWithChildren(dir.resolve("soak.out"));
        List<ProcessHandle> children = new ArrayList<>(soak.descendants().toList());

        soak.destroyForcibly();   // SIGKILL: no hook runs; each child watches its parent
        assertThat(soak.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertAllEnded(children);
    }

    /**
     * What {@code timeout -s INT 20 ./consistency-kit soak --minutes 1} does, and Ctrl-C in a terminal: SIGINT to the
     * whole process group. The soak's server and workers run in sessions of their own, so the signal reaches the soak
     * alone: it stops its workers, recovers, checks every invariant on the server, says so, and exits 130 within the
     * grace.
     */
    @Test
    void shouldRecoverCheckTheInvariantsAndSaySoWhenTheProcessGroupIsInterrupted(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/timeout")),
                "needs timeout(1), which signals the whole process group");
        Path out = dir.resolve("soak.out");
        ProcessBuilder soak = Soak.processBuilder(List.of("soak", "--seconds", "600"), "group-signal-soak", null);
        List<String> command = new ArrayList<>(List.of("/usr/bin/timeout", "--preserve-status", "-s", "INT", "12"));
        command.addAll(soak.command());
        Process timeout = new ProcessBuilder(command).redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(new File(out + ".err"))).start();

        // the grace is 20 s after the signal at 12 s; generous for a loaded machine, far below the 600 s asked
        assertThat(timeout.waitFor(120, TimeUnit.SECONDS)).isTrue();

        assertThat(timeout.exitValue()).isEqualTo(130);
        assertThat(Files.readString(out, StandardCharsets.UTF_8)).contains("soak interrupted after")
                .contains("every worker stopped; recovery run; 0 invariant violations; the server stopped");
    }
}
