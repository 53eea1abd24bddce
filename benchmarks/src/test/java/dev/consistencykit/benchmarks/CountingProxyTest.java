package dev.consistencykit.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;

import dev.consistencykit.embedded.EmbeddedMongo;

class CountingProxyTest {

    @Test
    void shouldCountEachDatabasesCommandsAndBytesBothWays() throws Exception {
        try (EmbeddedMongo server = EmbeddedMongo.start();
             CountingProxy proxy = CountingProxy.start("127.0.0.1", server.port());
             MongoClient client = MongoClients.create(PeerBench.proxied(server.connectionString(), proxy.port()))) {
            MongoCollection<Document> a = client.getDatabase("a").getCollection("c");
            a.insertOne(new Document("_id", 1).append("pad", "x".repeat(1000)));
            assertThat(a.find().first()).isNotNull();
            CountingProxy.Traffic before = proxy.traffic("a");
            a.updateOne(new Document("_id", 1), new Document("$set", new Document("k", 1)));
            client.getDatabase("b").getCollection("c").countDocuments();

            CountingProxy.Traffic one = proxy.traffic("a").since(before);

            assertThat(before.commands()).isEqualTo(2);
            assertThat(before.byCommand()).containsEntry("insert", 1L).containsEntry("find", 1L);
            assertThat(before.bytesSent()).isGreaterThan(1000);
            assertThat(before.bytesReceived()).isGreaterThan(1000);   // the document came back
            assertThat(one.commands()).isEqualTo(1);
            assertThat(one.byCommand()).containsOnlyKeys("update");
            assertThat(before.plus(one)).isEqualTo(proxy.traffic("a"));
            assertThat(proxy.traffic("b").byCommand()).containsOnlyKeys("aggregate");
            assertThat(proxy.traffic("admin").commands()).isPositive();   // the driver's handshake and monitoring
        }
    }

    @Test
    void shouldReadTheDatabaseAndCommandOfALegacyQuery() {
        BsonDocument command = new BsonDocument("isMaster", new BsonInt32(1));
        byte[] query = legacyQuery("admin.$cmd", command);
        BsonDocument find = new BsonDocument("$query", new BsonDocument("count", new BsonString("accounts")));

        assertThat(CountingProxy.target(2004, query)).containsExactly("admin", "isMaster");
        assertThat(CountingProxy.target(2004, legacyQuery("bank.$cmd", find))).containsExactly("bank", "count");
        assertThat(CountingProxy.target(2004, legacyQuery("bank.accounts", command)))
                .containsExactly("bank", "OP_QUERY");
    }

    @Test
    void shouldPointAConnectionStringAtTheProxyKeepingItsCredentialsAndOptions() {
        assertThat(PeerBench.proxied("mongodb://127.0.0.1:27017", 5000))
                .isEqualTo("mongodb://127.0.0.1:5000/?directConnection=true");
        assertThat(PeerBench.proxied("mongodb://u:p%40ss@db1:27017,db2:27017/admin?tls=false", 5000))
                .isEqualTo("mongodb://u:p%40ss@127.0.0.1:5000/admin?tls=false&directConnection=true");
        assertThat(PeerBench.proxied("mongodb://db1/?w=majority", 5000))
                .isEqualTo("mongodb://127.0.0.1:5000/?w=majority&directConnection=true");
    }

    private static byte[] legacyQuery(String namespace, BsonDocument document) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0).array());
        body.writeBytes(namespace.getBytes(StandardCharsets.UTF_8));
        body.write(0);
        body.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(0).putInt(-1).array());
        RawBsonDocument raw = new RawBsonDocument(document, new BsonDocumentCodec());
        ByteBuffer bytes = raw.getByteBuffer().asNIO();
        byte[] encoded = new byte[bytes.remaining()];
        bytes.get(encoded);
        body.writeBytes(encoded);
        return body.toByteArray();
    }
}
