package dev.consistencykit.sample;

/** The payload of a {@code ship} job: the application's own record, stored with the database's codecs. */
public record Shipment(String order, int parcels) {
}
