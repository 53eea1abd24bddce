package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.consistencykit.twophase.internal.TransactionEngine;

/** The public reasons are exactly the codes the engine stores. */
class CancellationReasonTest {

    @Test
    void shouldNameEveryCodeTheEngineStores() {
        List<String> stored = List.of(TransactionEngine.INSUFFICIENT_FUNDS, TransactionEngine.PARTICIPANT_MISSING,
                TransactionEngine.PRECONDITION_FAILED, TransactionEngine.TOO_MANY_PENDING,
                TransactionEngine.PARTICIPANT_REJECTED, TransactionEngine.STALE, TransactionEngine.OVERFLOW);

        assertThat(List.of(CancellationReason.values())).extracting(CancellationReason::stored)
                .containsExactlyElementsOf(stored);
        assertThat(CancellationReason.fromStored("SOMETHING_NEWER")).isEmpty();
    }
}
