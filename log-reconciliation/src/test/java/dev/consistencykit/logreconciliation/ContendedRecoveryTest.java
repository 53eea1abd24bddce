package dev.consistencykit.logreconciliation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.ContendedRecovery;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/**
 * A recovery pass whose writes on one record meet a concurrent writer on every attempt (what a real engine answers
 * with deadlocks) leaves that record to its next pass and recovers the others; the next pass finishes it.
 */
@ExtendWith(MongoTestExtension.class)
class ContendedRecoveryTest {

    @Test
    void shouldLeaveAContendedRecordToTheNextPassAndRecoverTheOthers(MongoClient client) {
        assertThat(ContendedRecovery.check(client, BooksWorkload.transfers(Books.accounts(4, 500)).overdraftFloor(0), 3)).isEmpty();
    }
}
