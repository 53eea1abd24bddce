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
        IllegalStateException boom = new IllegalStateException("no");
        log.failed("j1", "email", 3, 8, Instant.parse("2030-01-01T00:00:04Z"), Duration.ofSeconds(4),
                AttemptFailure.of("", boom));

        assertThat(lines()).containsExactly("[mail] job 'j1' of type 'email': attempt 3 of 8 failed, next attempt at "
                + "2030-01-01T00:00:04Z (in 4.0 s): IllegalStateException: no");
        assertThat(events).extracting(SubstituteLoggingEvent::getThrowable).as("logged with its stack")
                .containsExactly(boom);
    }

    /** An exception whose message cannot be read is logged by a stand-in with its frames, never by itself. */
    @Test
    void shouldLogAStandInForAnExceptionThatCannotBeDescribed() {
        RuntimeException hostile = new RuntimeException() {
            @Override
            public String getMessage() {
                throw new UnsupportedOperationException("no message for you");
            }
        };
        log.dead("j2", "email", 1, 1, AttemptFailure.of("", hostile));

        assertThat(lines().get(0)).endsWith("is dead after attempt 1 of 1 (replay or discard it): "
                + hostile.getClass().getName() + " (its message could not be read: getMessage() threw"
                + " UnsupportedOperationException)");
        Throwable logged = events.peek().getThrowable();
        assertThat(logged).isNotSameAs(hostile).isInstanceOf(AttemptFailure.UnreadableFailure.class);
        assertThat(logged.getStackTrace()).isEqualTo(hostile.getStackTrace());
        assertThat(logged.getMessage()).contains("could not be read");
    }

    @Test
    void shouldBoundTheLinesPerWindowAndCountWhatItLeftOut() {
        for (int i = 0; i < 1_000; i++) {
            log.failed("j" + i, "email", 1, 8, Instant.EPOCH, Duration.ofMillis(5), AttemptFailure.of("down"));
        }
        assertThat(lines()).hasSize(FailureLog.LINES_PER_WINDOW);

        nanos.addAndGet(FailureLog.WINDOW.toNanos());
        log.failed("next", "email", 1, 8, Instant.EPOCH, Duration.ofMillis(5), AttemptFailure.of("down"));
        log.dead("last", "email", 8, 8, AttemptFailure.of("down"));

        List<String> lines = lines();
        assertThat(lines.get(FailureLog.LINES_PER_WINDOW)).endsWith("down (980 more failed attempts not logged since "
                + "the last line)");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("[mail] job 'last' of type 'email' is dead after attempt 8 of 8 "
                + "(replay or discard it): down");
    }
}
