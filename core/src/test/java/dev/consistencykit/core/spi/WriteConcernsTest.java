package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import com.mongodb.WriteConcern;

import dev.consistencykit.core.UnsafeConfigurationException;

/** {@link WriteConcerns#acknowledged}: an unacknowledged write concern is refused. */
class WriteConcernsTest {

    @Test
    void shouldRefuseUnacknowledgedWriteConcern() {
        assertThat(WriteConcerns.acknowledged("s", WriteConcern.MAJORITY)).isEqualTo(WriteConcern.MAJORITY);
        assertThatThrownBy(() -> WriteConcerns.acknowledged("payments", WriteConcern.UNACKNOWLEDGED))
                .isInstanceOf(UnsafeConfigurationException.class)
                .hasMessageContaining("[payments]")
                .hasMessageContaining("w:0");
    }
}
