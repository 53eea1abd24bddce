package dev.consistencykit.driverfloor;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.consistencykit.core.spi.DriverFloor;

/**
 * This module's class path holds the lowest supported driver, so the compatibility tests it runs (every pattern's,
 * scanned from their test jars) prove the library on it.
 */
class DriverFloorTest {

    @Test
    void shouldRunOnTheDriverVersionTheLibraryDeclaresAsItsFloor() {
        assertThat(DriverFloor.found()).isEqualTo(DriverFloor.MINIMUM);
        DriverFloor.require("floor");
    }
}
