package dev.consistencykit.sample;

import org.bson.codecs.pojo.annotations.BsonId;

/** An order: placed, then shipped by its job. */
public record Order(@BsonId String id, String item, int quantity, String status) {

    /** A new order. */
    public static Order placed(String id, String item, int quantity) {
        return new Order(id, item, quantity, "placed");
    }
}
