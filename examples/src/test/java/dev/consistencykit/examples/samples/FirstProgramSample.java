package dev.consistencykit.examples.samples;

import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.OperationResult;
import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.Transfer;
import dev.consistencykit.twophase.TwoPhaseCommit;

/** The README's first program: from a server and a client to a transfer read back. */
public final class FirstProgramSample {

    private FirstProgramSample() {
    }

    /** Runs the program; {@code uri} is a server's, or {@code null} for the embedded one. */
    public static String run(String uri) {
        String printed;
        // README:start
        try (EmbeddedMongo embedded = uri == null ? EmbeddedMongo.start() : null;       // in memory, for a first try
             MongoClient client = MongoClients.create(uri != null ? uri : embedded.connectionString())) {
            MongoDatabase db = client.getDatabase("bank");
            db.getCollection("accounts").insertMany(List.of(
                    new Document("_id", "alice").append("balance", 100L),
                    new Document("_id", "bob").append("balance", 0L)));

            TwoPhaseCommit payments = TwoPhaseCommit.builder(db).name("payments").build();
            payments.ensureIndexes();                          // once, at start-up: the indexes its safety rests on
            OperationResult result = payments.transfer(Transfer.of(OperationId.of("t-1"), "alice", "bob", 30));

            ConsistentRead view = payments.readConsistent("accounts", List.of("alice", "bob"));
            printed = result.outcome() + " " + view.documents();   // COMMITTED [{_id=alice, balance=70}, {…=30}]
        }
        // README:end
        return printed;
    }
}
