package dev.consistencykit.jobqueue.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.Level;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.SubstituteLogger;

class FailureLogTest {

    private final ConcurrentLinkedQueue<SubstituteLoggingEvent> events = new ConcurrentLinkedQueue<>();
    private final AtomicLong nanos = new AtomicLong();
    private final FailureLog log = new FailureLog(new EventRecordingLogger(new SubstituteLogger("jobs", events,
            false), events), "mail", nanos::get);

    private List<String> lines() {
        return events.stream().map(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.WARN);
            return MessageFormatter.arrayFormat(e.getMessage(), e.getArgumentArray()).getMessage();
        }).toList();
    }

    @Test
    void shouldSayWhichAttemptFailedWhenItRunsNextAndWhy() {
        log.failed("j1", "email", 3, 8, Instant.parse("2030-01-01T00:00:04Z"), Duration.ofSeconds(4), "Boom: no");

        assertThat(lines()).containsExactly("[mail] job 'j1' of type 'email': attempt 3 of 8 failed, next attempt at "
                + "2030-01-01T00:00:04Z (in 4.0 s): Boom: no");
    }

    @Test
    void shouldBoundTheLinesPerWindowAndCountWhatItLeftOut() {
        for (int i = 0; i < 1_000; i++) {
            log.failed("j" + i, "email", 1, 8, Instant.EPOCH, Duration.ofMillis(5), "down");
        }
        assertThat(lines()).hasSize(FailureLog.LINES_PER_WINDOW);

        nanos.addAndGet(FailureLog.WINDOW.toNanos());
        log.failed("next", "email", 1, 8, Instant.EPOCH, Duration.ofMillis(5), "down");
        log.dead("last", "email", 8, 8, "down");

        List<String> lines = lines();
        assertThat(lines.get(FailureLog.LINES_PER_WINDOW)).endsWith("down (980 more failed attempts not logged since "
                + "the last line)");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("[mail] job 'last' of type 'email' is dead after attempt 8 of 8 "
                + "(replay or discard it): down");
    }
}
