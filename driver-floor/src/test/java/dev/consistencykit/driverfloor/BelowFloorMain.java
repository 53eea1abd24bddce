package dev.consistencykit.driverfloor;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.twophase.TwoPhaseCommit;

/** Builds a two-phase instance and prints what happened: run by {@link BelowFloorTest} on a driver below the floor. */
public final class BelowFloorMain {

    private BelowFloorMain() {
    }

    /** Prints {@code built}, or the exception's class and message. */
    public static void main(String[] args) {
        try (MongoClient client = MongoClients.create("mongodb://127.0.0.1:1")) {
            TwoPhaseCommit.builder(client.getDatabase("unused")).build();
            System.out.println("built");
        } catch (RuntimeException | LinkageError e) {
            System.out.println(e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
