package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

class MaintenanceTest {

    private static final long WAIT_SECONDS = 30;   // a bound for a latch, never a speed the test depends on

    /** A clock the test moves by hand. */
    private static final class ManualClock extends Clock {
        private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));

        void advance(Duration d) {
            now.updateAndGet(i -> i.plus(d));
        }

        @Override
        public Instant instant() {
            return now.get();
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void shouldRunEveryStepOnItsScheduleAndReportItHealthy() throws Exception {
        CountDownLatch ranTwice = new CountDownLatch(2);
        Maintenance maintenance = Maintenance.builder().jitter(0)
                .step("tick", Duration.ofMillis(10), ranTwice::countDown).build().start();
        try {
            assertThat(ranTwice.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        } finally {
            assertThat(maintenance.stop(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
        }
        Maintenance.StepHealth health = maintenance.health().get(0);
        assertThat(health.name()).isEqualTo("tick");
        assertThat(health.runs()).isGreaterThanOrEqualTo(2);
        assertThat(health.lastSuccess()).isPresent();
        assertThat(health.consecutiveFailures()).isZero();
    }

    @Test
    void shouldReportAFailingStepAndRetryItUntilItSucceeds() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch recovered = new CountDownLatch(1);
        Maintenance maintenance = Maintenance.builder().jitter(0).step("flaky", Duration.ofMillis(20), () -> {
            if (calls.incrementAndGet() <= 2) {
                throw new ServerUnavailableException("test", null, "server down", null);
            }
            recovered.countDown();
        }).build().start();
        try {
            assertThat(recovered.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
        } finally {
            maintenance.stop(Duration.ofSeconds(WAIT_SECONDS));
        }
        assertThat(calls.get()).isGreaterThanOrEqualTo(3);
        assertThat(maintenance.health().get(0).consecutiveFailures()).isZero();
    }

    @Test
    void shouldShowFailuresErrorsAndLagInItsHealthView() {
        ManualClock clock = new ManualClock();
        AtomicInteger calls = new AtomicInteger();
        Maintenance maintenance = Maintenance.builder().clock(clock)
                .step("ok", Duration.ofMinutes(1), () -> { })
                .step("broken", Duration.ofMinutes(1), () -> {
                    calls.incrementAndGet();
                    throw new IllegalStateException("no luck");
                }).build();

        maintenance.runOnce();
        clock.advance(Duration.ofMinutes(3));
        maintenance.runOnce();

        List<Maintenance.StepHealth> health = maintenance.health();
        assertThat(health.get(0).healthy()).isTrue();
        assertThat(health.get(1).healthy()).isFalse();
        assertThat(health.get(1).consecutiveFailures()).isEqualTo(2);
        assertThat(health.get(1).lastError()).hasValueSatisfying(e -> assertThat(e).contains("no luck"));
        assertThat(health.get(1).lag()).isEqualTo(Duration.ofMinutes(2));
        assertThat(calls.get()).isEqualTo(2);
    }

    @Test
    void shouldStopPromptlyEvenDuringAStep() throws Exception {
        CountDownLatch inStep = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        Maintenance maintenance = Maintenance.builder().jitter(0).step("slow", Duration.ofMillis(1), () -> {
            inStep.countDown();
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).build().start();
        assertThat(inStep.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

        assertThat(maintenance.stop(Duration.ofSeconds(WAIT_SECONDS))).isTrue();
    }

    @Test
    void shouldRefuseARunnerWithoutStepsAndAStepWithoutAPeriod() {
        assertThatThrownBy(() -> Maintenance.builder().build()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> MaintenanceStep.of("x", Duration.ZERO, () -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("every");
    }
}
