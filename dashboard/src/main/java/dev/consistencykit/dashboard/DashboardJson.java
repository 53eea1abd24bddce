package dev.consistencykit.dashboard;

import org.bson.Document;
import org.bson.UuidRepresentation;
import org.bson.codecs.BsonTypeClassMap;
import org.bson.codecs.Codec;
import org.bson.codecs.DocumentCodec;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import com.mongodb.MongoClientSettings;

/**
 * The API's JSON: MongoDB's relaxed extended JSON, so a value keeps its BSON type ({@code {"$oid": …}},
 * {@code {"$date": …}}) and a record reads as the shell shows it. Text from the database is escaped by the writer; the
 * page puts it in the DOM as text only.
 */
final class DashboardJson {

    private static final JsonWriterSettings RELAXED = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .build();
    /** The driver's default codecs, with standard UUIDs: a record read with them holds nothing else. */
    private static final Codec<Document> CODEC = new DocumentCodec(MongoClientSettings.getDefaultCodecRegistry(),
            new BsonTypeClassMap()).withUuidRepresentation(UuidRepresentation.STANDARD);
    private static final String PREFIX = "{\"v\": ";

    private DashboardJson() {
    }

    /** {@code document} as relaxed extended JSON. */
    static String of(Document document) {
        return document.toJson(RELAXED, CODEC);
    }

    /** One value as relaxed extended JSON: how the page names an operation in a URL. */
    static String value(Object value) {
        String json = of(new Document("v", value));
        return json.substring(PREFIX.length(), json.length() - 1);
    }
}
