package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The reasons and the codes they store: the enum is the one place a code is stated, so what is held here is that the
 * codes already stored in applications' transaction records keep their meaning.
 */
class CancellationReasonTest {

    @Test
    void shouldNameEveryCodeTheEngineStores() {
        List<String> stored = List.of("INSUFFICIENT_FUNDS", "PARTICIPANT_MISSING", "PRECONDITION_FAILED",
                "TOO_MANY_PENDING", "PARTICIPANT_REJECTED", "STALE", "OVERFLOW");

        assertThat(List.of(CancellationReason.values())).extracting(CancellationReason::stored)
                .containsExactlyElementsOf(stored);
        assertThat(CancellationReason.fromStored("SOMETHING_NEWER")).isEmpty();
        for (CancellationReason reason : CancellationReason.values()) {
            assertThat(CancellationReason.fromStored(reason.stored())).contains(reason);
        }
    }
}
