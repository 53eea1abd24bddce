package dev.consistencykit.sample;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.spring.ConsistencyKitDatabase;

/**
 * A service on the consistency-kit starter: transfers between accounts (two-phase commit, bean {@code payments}) and
 * orders placed together with their shipping job (the job queue's outbox, bean {@code shipping}), over HTTP. The
 * instances, their indexes, their maintenance (with the relay of the orders' outbox) and the shipping workers come
 * from {@code application.properties}; the code below only uses them.
 *
 * <p>Run it with {@code scripts/sample-app}: with {@code MONGODB_URI} (or {@code --spring.mongodb.uri=…}) it uses
 * that server, otherwise the starter's in-memory one ({@code consistency-kit.embedded.enabled=true}).
 */
@SpringBootApplication
public class SampleApplication {

    private static final String URI_ARGUMENT = "--spring.mongodb.uri=";

    /** The orders collection, typed: the application's own record, encoded by the database's codec registry. */
    @Bean
    MongoCollection<Order> orders(ConsistencyKitDatabase database) {
        return database.database().getCollection(Orders.COLLECTION, Order.class);
    }

    /** Placing orders with their shipping job. */
    @Bean
    Orders orderService(JobQueue shipping, MongoCollection<Order> orders) {
        return new Orders(shipping, orders);
    }

    /** The accounts, for the controller's reads and creations. */
    @Bean
    MongoCollection<Account> accounts(ConsistencyKitDatabase database) {
        return database.database().getCollection("accounts", Account.class);
    }

    /** The day's dispatch document the shipping jobs count parcels on, created if absent. */
    @Bean
    ApplicationRunner dispatch(ConsistencyKitDatabase database) {
        return args -> database.database().getCollection("dispatch").updateOne(
                com.mongodb.client.model.Filters.eq("_id", "today"),
                com.mongodb.client.model.Updates.setOnInsert("parcels", 0),
                new com.mongodb.client.model.UpdateOptions().upsert(true));
    }

    /** The job handler of {@code ship} jobs (a bean: the starter hands it to the queue by its job type). */
    @Bean
    ShipOrder shipOrder() {
        return new ShipOrder();
    }

    /**
     * Starts the service on {@code uri}, or, when it is {@code null}, on the starter's in-memory server
     * ({@code consistency-kit.embedded.enabled=true}, closed with the context), with the extra arguments given.
     */
    public static ConfigurableApplicationContext start(String uri, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add(uri == null ? "--consistency-kit.embedded.enabled=true" : "--spring.mongodb.uri=" + uri);
        return new SpringApplication(SampleApplication.class).run(all.toArray(new String[0]));
    }

    /** {@code --spring.mongodb.uri=…} or {@code MONGODB_URI} if given, else the embedded server. */
    public static void main(String[] args) {
        String given = List.of(args).stream().filter(a -> a.startsWith(URI_ARGUMENT)).findFirst()
                .map(a -> a.substring(URI_ARGUMENT.length())).orElse(System.getenv("MONGODB_URI"));
        start(given, List.of(args).stream().filter(a -> !a.startsWith(URI_ARGUMENT)).toArray(String[]::new));
    }

    /** For the tests: the database the instances use. */
    static MongoDatabase database(ConfigurableApplicationContext context) {
        return context.getBean(ConsistencyKitDatabase.class).database();
    }
}
