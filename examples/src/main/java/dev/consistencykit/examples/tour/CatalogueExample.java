package dev.consistencykit.examples.tour;

import java.time.Duration;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.FaultInjector;
import dev.consistencykit.testkit.FaultMode;
import dev.consistencykit.testkit.InjectedCrash;
import dev.consistencykit.versioning.ChangeSet;
import dev.consistencykit.versioning.VersionedStore;
import dev.consistencykit.versioning.VersionedTree;

/** Versioned documents: a product catalogue tree that readers only ever see whole. */
public final class CatalogueExample implements TourExample {

    @Override
    public String pattern() {
        return "versioning";
    }

    @Override
    public String title() {
        return "Versioned documents: a product catalogue tree";
    }

    private static Document product(String title, long price) {
        return new Document("title", title).append("price", price);
    }

    @Override
    public void run(MongoDatabase db, Narration n) {
        n.step("setup: an empty catalogue root at version 0");
        VersionedStore.on(db).ensureIndexes();
        VersionedStore.on(db).createRoot("catalogue");

        n.step("publish the catalogue: stage on the root, write three item versions, move the root to version 1");
        VersionedStore.on(db).commit(ChangeSet.on("catalogue", 0).put("shoes", product("Shoes", 4_900))
                .put("hats", product("Hats", 1_500)).put("socks", product("Socks", 500)).build());
        n.reader(view(db));

        n.step("the spring sale (2 prices, hats out, bags in); the process dies before the root moves (write #2)");
        try {
            VersionedStore.on(FaultInjector.at(2, FaultMode.CRASH_AFTER).wrap(db)).commit(ChangeSet.on("catalogue", 1)
                    .put("shoes", product("Shoes", 3_900)).put("socks", product("Socks", 400)).delete("hats")
                    .put("bags", product("Bags", 2_900)).build());
            n.problem("the crash was not injected");
        } catch (InjectedCrash crash) {
            n.crashed(crash.getMessage());
        }
        VersionedTree during = VersionedStore.on(db).read("catalogue");
        n.reader(describe(during) + " (the sale's writes are there, unseen)");
        n.check(during.version() == 1 && during.items().size() == 3, "version 1, whole, while the sale is staged");

        n.step("a fresh process runs recovery: it commits the sale, because its writer had staged every document and the"
                + " root is still at the sale's base: finishing it is what the writer was about to do, and no reader"
                + " saw any of it before");
        VersionedStore.on(db).recover(Duration.ZERO);
        VersionedTree after = VersionedStore.on(db).read("catalogue");
        n.reader(describe(after));
        n.check(after.version() == 2 && after.items().keySet().equals(java.util.Set.of("shoes", "socks", "bags")),
                "version 2 with the whole sale");
        n.step("time travel: version 1 is still there, exactly as it was committed");
        n.reader(describe(VersionedStore.on(db).readAsOf("catalogue", 1)));
        n.check(VersionedStore.on(db).readAsOf("catalogue", 1).items().size() == 3, "version 1 unchanged");
    }

    private static String view(MongoDatabase db) {
        return describe(VersionedStore.on(db).read("catalogue"));
    }

    private static String describe(VersionedTree tree) {
        StringBuilder sb = new StringBuilder("version " + tree.version() + ":");
        tree.items().forEach((id, value) -> sb.append(' ').append(id).append(' ')
                .append(String.format("%.2f", value.getLong("price") / 100.0)));
        return sb.toString();
    }
}
