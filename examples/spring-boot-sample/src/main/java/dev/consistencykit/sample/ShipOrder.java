package dev.consistencykit.sample;

import com.mongodb.client.model.Updates;

import dev.consistencykit.jobqueue.JobContext;
import dev.consistencykit.spring.TypedJobHandler;

/**
 * Ships an order: marks it shipped and counts the parcels on the day's dispatch document, each effect once per job
 * however often the job runs ({@link JobContext#applyOnce}).
 */
public final class ShipOrder implements TypedJobHandler {

    /** The job type. */
    public static final String TYPE = "ship";

    @Override
    public String jobType() {
        return TYPE;
    }

    @Override
    public void handle(JobContext ctx) {
        Shipment shipment = ctx.payload(Shipment.class);
        ctx.applyOnce(Orders.COLLECTION, shipment.order(), Updates.set("status", "shipped"));
        ctx.applyOnce("dispatch", "today", Updates.inc("parcels", shipment.parcels()));
    }
}
