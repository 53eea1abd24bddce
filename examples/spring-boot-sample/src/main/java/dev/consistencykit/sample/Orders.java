package dev.consistencykit.sample;

import java.util.Optional;

import com.mongodb.client.MongoCollection;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;

/**
 * Placing an order: the order and its shipping job in one atomic write ({@link JobQueue#insertWith}), so that a crash
 * can never leave an order without its shipment or a shipment without its order. The job's id is the order's, so a
 * client's retry of the same order places it once.
 */
public final class Orders {

    /** The business collection of orders, relayed by maintenance ({@code outbox-collections}). */
    public static final String COLLECTION = "orders";

    private final JobQueue shipping;
    private final MongoCollection<Order> orders;

    /** Orders on {@code orders}, shipped by {@code shipping}. */
    public Orders(JobQueue shipping, MongoCollection<Order> orders) {
        this.shipping = shipping;
        this.orders = orders;
    }

    /** The shipping job of order {@code orderId}. */
    public static JobRequest shipping(String orderId, int parcels) {
        return JobRequest.of(ShipOrder.TYPE, new Shipment(orderId, parcels)).withId(OperationId.of("ship-" + orderId));
    }

    /**
     * Places {@code order} with its shipping job.
     *
     * @return the job's id; empty if another order holds this id (nothing written)
     */
    public Optional<OperationId> place(Order order) {
        return shipping.insertWith(orders, order, shipping(order.id(), order.quantity()));
    }

    /** The order, as stored now. */
    public Optional<Order> find(String id) {
        return Optional.ofNullable(orders.find(com.mongodb.client.model.Filters.eq("_id", id)).first());
    }
}
