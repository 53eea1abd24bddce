package dev.consistencykit.core.spi;

import static com.mongodb.client.model.Filters.exists;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.ServerDatabases;

/** Records are released in batches, only those this instance wrote, and nothing else is touched. */
@ExtendWith(ServerDatabases.class)
class RecordReleasesServerTest {

    private static MongoCollection<Document> records(MongoDatabase db, int n, String nonce) {
        MongoCollection<Document> records = db.getCollection("records");
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            docs.add(new Document("_id", nonce + i).append(RecordReleases.FIELD, nonce + i));
        }
        records.insertMany(docs);
        return records;
    }

    @Test
    void shouldReleaseABatchOnceItIsFullAndTheRestOnFlush(MongoDatabase db) {
        MongoCollection<Document> records = records(db, RecordReleases.BATCH + 3, "n");
        RecordReleases releases = new RecordReleases("t", records, RetryPolicy.DEFAULT);

        for (int i = 0; i < RecordReleases.BATCH - 1; i++) {
            releases.written("n" + i, "n" + i);
        }
        assertThat(records.countDocuments(exists(RecordReleases.FIELD))).as("nothing before the batch is full")
                .isEqualTo(RecordReleases.BATCH + 3);
        releases.written("n" + (RecordReleases.BATCH - 1), "n" + (RecordReleases.BATCH - 1));
        assertThat(records.countDocuments(exists(RecordReleases.FIELD))).isEqualTo(3);
        releases.written("n" + RecordReleases.BATCH, "n" + RecordReleases.BATCH);
        releases.flush();

        assertThat(records.countDocuments(exists(RecordReleases.FIELD))).isEqualTo(2);
    }

    @Test
    void shouldNeverReleaseARecordAnotherCallWrote(MongoDatabase db) {
        MongoCollection<Document> records = records(db, 2, "a");
        RecordReleases releases = new RecordReleases("t", records, RetryPolicy.DEFAULT);

        releases.written("a0", "a0");
        releases.written("a1", "someone else's nonce");   // a1 carries its own writer's nonce
        releases.flush();

        assertThat(records.find(exists(RecordReleases.FIELD)).map(d -> d.get("_id")).into(new ArrayList<>()))
                .containsExactly("a1");
    }
}
