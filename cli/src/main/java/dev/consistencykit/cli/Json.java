package dev.consistencykit.cli;

import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/** Renders one JSON object per line with the BSON library's JSON writer (relaxed mode: plain numbers). */
final class Json {

    private static final JsonWriterSettings SETTINGS = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED)
            .build();

    private Json() {
    }

    static String line(Document document) {
        return document.toJson(SETTINGS);
    }
}
