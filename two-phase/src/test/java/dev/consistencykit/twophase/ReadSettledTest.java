package dev.consistencykit.twophase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.ServerUnavailableException;
import dev.consistencykit.testkit.FaultyNetwork;
import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * {@code readSettled} answers "not settled" when its wait runs out, also when it runs out in the middle of a read (a
 * slow or hung server): that is the answer its caller asked for within {@code maxWait}, not a failure. Only the
 * instance's own operation timeout, longer than the wait, is a failure.
 */
@ExtendWith(MongoTestExtension.class)
class ReadSettledTest {

    /** What {@code read} does once the network hangs, on an instance with {@code operationTimeout}. */
    private static void whileHung(MongoTarget target, Duration operationTimeout, Consumer<TwoPhaseCommit> read)
            throws Exception {
        try (FaultyNetwork network = FaultyNetwork.inFrontOf(target);
             MongoClient client = MongoClients.create(network.connectionString())) {
            MongoDatabase db = client.getDatabase(MongoTarget.freshDatabaseName("settledwait"));
            Bank.seed(db, Bank.accounts(2, 100));
            TwoPhaseCommit payments = TwoPhaseCommit.builder(db).operationTimeout(operationTimeout).build();
            assertThat(payments.readSettled("accounts", List.of("a0", "a1"), Duration.ofSeconds(2)).isSettled())
                    .isTrue();
            network.hang();
            try {
                read.accept(payments);
            } finally {
                network.heal();
            }
            MongoTarget.drop(db);
        }
    }

    @Test
    void shouldAnswerNotSettledWhenTheWaitRunsOutDuringARead(MongoTarget target) throws Exception {
        whileHung(target, Duration.ofSeconds(20), payments -> {
            SettledRead view = payments.readSettled("accounts", List.of("a0", "a1"), Duration.ofMillis(300));

            assertThat(view.isSettled()).isFalse();
            assertThat(view.documents()).isEmpty();
        });
    }

    @Test
    void shouldFailTypedWhenTheOperationTimeoutEndsTheReadBeforeTheWait(MongoTarget target) throws Exception {
        whileHung(target, Duration.ofMillis(300), payments -> assertThatThrownBy(() -> payments.readSettled(
                "accounts", List.of("a0", "a1"), Duration.ofSeconds(30))).isInstanceOf(
                ServerUnavailableException.class));
    }
}
