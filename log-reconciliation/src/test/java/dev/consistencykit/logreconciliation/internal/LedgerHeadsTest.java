package dev.consistencykit.logreconciliation.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LedgerHeadsTest {

    @Test
    void shouldKeepTheHighestSeqIdLearnedAndForgetOnRequest() {
        LedgerHeads heads = new LedgerHeads();
        heads.learn("a", 5);
        heads.learn("a", 3);
        assertThat(heads.get("a")).isEqualTo(5L);
        heads.learn("a", 9);
        assertThat(heads.get("a")).isEqualTo(9L);
        heads.forget("a");
        assertThat(heads.get("a")).isNull();
    }

    @Test
    void shouldHoldNoMoreAccountsThanItsBoundHoweverManyAProcessAppendsTo() {
        LedgerHeads heads = new LedgerHeads(100);
        for (int i = 0; i < 10_000; i++) {
            heads.learn("account-" + i, i);
        }
        assertThat(heads.size()).isLessThanOrEqualTo(100);
        assertThat(heads.get("account-9999")).isEqualTo(9999L);   // the latest stays
        assertThat(heads.get("account-0")).isNull();              // the first left: its next append asks the server
    }
}
