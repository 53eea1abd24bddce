package dev.consistencykit.jobqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

/** Schedules read as crontab and Spring read them, refused when they are not cron expressions. */
class ScheduleTest {

    private static final Instant AT = Instant.parse("2030-03-30T23:59:30Z");

    @Test
    void shouldReadFiveFieldsAsCrontabAndSixWithSecondsFirst() {
        assertThat(Schedule.cron("0 * * * *").nextAfter(AT)).contains(Instant.parse("2030-03-31T00:00:00Z"));
        assertThat(Schedule.cron("*/10 * * * * *").nextAfter(AT)).contains(Instant.parse("2030-03-30T23:59:40Z"));
        assertThat(Schedule.cron("@daily").nextAfter(AT)).contains(Instant.parse("2030-03-31T00:00:00Z"));
        assertThat(Schedule.cron("0 3 * * *", ZoneId.of("Europe/Paris")).nextAfter(AT))
                .as("03:00 in Paris on the day summer time starts is 01:00 UTC")
                .contains(Instant.parse("2030-03-31T01:00:00Z"));
        assertThat(Schedule.cron("0 0 1 1 *").nextAfter(AT)).contains(Instant.parse("2031-01-01T00:00:00Z"));
        assertThat(Schedule.cron("0 * * * *").nextAfter(Instant.parse("2030-03-30T10:00:00.795Z")))
                .as("a whole second, whatever fraction of one the time asked from has")
                .contains(Instant.parse("2030-03-30T11:00:00Z"));
        assertThat(Schedule.cron("* * * * * *").nextAfter(Instant.parse("2030-03-30T10:00:00.795Z")))
                .contains(Instant.parse("2030-03-30T10:00:01Z"));
    }

    @Test
    void shouldReadTheJavadocsSchedules() {
        // javadoc:start job-queue/src/main/java/dev/consistencykit/jobqueue/Schedule.java
        Schedule nightly = Schedule.cron("0 3 * * *", ZoneId.of("Europe/Paris"));   // 03:00 daily in Paris (crontab's fields)
        Schedule often = Schedule.cron("0/30 * * * * *");                          // every 30 s, UTC (seconds first)
        Schedule hourly = Schedule.cron("0 * * * *").missedRuns(Schedule.MissedRuns.EACH);   // every missed hour caught up
        Schedule sweep = Schedule.fixedDelay(Duration.ofMinutes(5));               // 5 minutes after the previous run ended
        // javadoc:end
        assertThat(nightly.nextAfter(AT)).contains(Instant.parse("2030-03-31T01:00:00Z"));
        assertThat(often.nextAfter(AT)).contains(Instant.parse("2030-03-31T00:00:00Z"));
        assertThat(hourly.missed()).contains(Schedule.MissedRuns.EACH);
        assertThat(sweep.delay()).contains(Duration.ofMinutes(5));
    }

    @Test
    void shouldCountAFixedDelayFromWhereItIsAsked() {
        assertThat(Schedule.fixedDelay(Duration.ofMinutes(5)).nextAfter(AT)).contains(AT.plusSeconds(300));
        assertThat(Schedule.fixedDelay(Duration.ofMinutes(5)).missed()).isEmpty();
        assertThatThrownBy(() -> Schedule.fixedDelay(Duration.ofMinutes(5)).missedRuns(Schedule.MissedRuns.EACH))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Schedule.fixedDelay(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Schedule.fixedDelay(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRefuseWhatIsNotACronExpression() {
        for (String bad : new String[] {"", "* * * *", "* * * * * * * *", "61 * * * *", "a b c d e", "x".repeat(201),
                "0 0 31 2 * * 2030", "{$where: 1}"}) {
            assertThatThrownBy(() -> Schedule.cron(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void shouldBeEqualWhenItSaysTheSameThing() {
        assertThat(Schedule.cron(" 0 * * * * ")).isEqualTo(Schedule.cron("0 * * * *"))
                .hasSameHashCodeAs(Schedule.cron("0 * * * *"));
        assertThat(Schedule.cron("0 * * * *")).isNotEqualTo(Schedule.cron("0 * * * *")
                .missedRuns(Schedule.MissedRuns.SKIP));
        assertThat(Schedule.cron("0 * * * *").toString()).isEqualTo("cron '0 * * * *' Z, missed runs ONCE");
        assertThat(Schedule.fixedDelay(Duration.ofMinutes(5))).hasToString("every PT5M after the previous run");
    }
}
