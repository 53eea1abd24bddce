package dev.consistencykit.sample;

import org.bson.codecs.pojo.annotations.BsonId;

/**
 * An account as the service stores and shows it: its id and balance in cents. Two-phase commit keeps its own fields
 * on the document while a transfer is in flight; reads through {@code payments.readSettled} show settled balances.
 */
public record Account(@BsonId String id, long balance) {
}
