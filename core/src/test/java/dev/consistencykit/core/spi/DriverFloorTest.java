package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DriverFloorTest {

    @Test
    void shouldAcceptTheFloorAndLaterVersions() {
        assertThat(DriverFloor.problem(DriverFloor.MINIMUM, true)).isNull();
        assertThat(DriverFloor.problem("5.14.0", true)).isNull();
        assertThat(DriverFloor.problem("6.0.0-alpha1", true)).isNull();
        assertThat(DriverFloor.problem("unknown", true)).as("a driver that has the types works").isNull();
    }

    @Test
    void shouldNameTheVersionFoundAndTheFloorWhenTheDriverIsOlder() {
        assertThat(DriverFloor.problem("5.0.1", false)).contains("5.0.1").contains(DriverFloor.MINIMUM)
                .contains("mongodb-driver-sync").doesNotContain("\n");
        assertThat(DriverFloor.problem("5.1.4", true)).contains("5.1.4");
        assertThat(DriverFloor.problem("4.11.0", false)).contains("4.11.0");
    }

    @Test
    void shouldOrderVersionsByNumberNotText() {
        assertThat(DriverFloor.compare("5.10.0", "5.2.0")).isPositive();
        assertThat(DriverFloor.compare("5.2", "5.2.0")).isZero();
        assertThat(DriverFloor.compare("4.11.1", "5.2.0")).isNegative();
    }

    @Test
    void shouldReportTheDriverOnTheClassPath() {
        assertThat(DriverFloor.found()).matches("\\d+\\.\\d+\\.\\d+.*");
        DriverFloor.require("test");
    }
}
