package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.consistencykit.twophase.internal.TransactionEngine;

/** The public reasons are exactly the codes the engine stores. */
class CancellationReasonTest {

    @Test
    void shouldNameEveryCodeTheEngineStores() {
        List<String> stored = TransactionEngine.REASON_CODES;

        assertThat(List.of(CancellationReason.values())).extracting(CancellationReason::stored)
                .containsExactlyElementsOf(stored);
        assertThat(CancellationReason.fromStored("SOMETHING_NEWER")).isEmpty();
    }
}
