package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Items that are the application's own records: encoded and decoded with the database's codec registry. */
@ExtendWith(MongoTestExtension.class)
class TypedItemsTest {

    /** A product, as the application's code knows it. */
    public record Product(String title, long price) {
    }

    /** A type no stored product can be made into. */
    public record Label(int colour) {
    }

    /**
     * Items whose ids are documents with the same fields in another order are two items for the server's unique index
     * (field order counts in MongoDB), though Java's {@code Document.equals} calls them one: a read decides which
     * version of an item is visible by the server's equality, so both stay, each with its own value.
     */
    @Test
    void shouldKeepItemsWhoseIdsDifferOnlyInFieldOrderApart(MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).build();
        store.ensureIndexes();
        store.createRoot("shop");
        store.update("shop", (tree, change) -> change.put(new Document("a", 1).append("b", 2), new Document("n", 1)));
        store.update("shop", (tree, change) -> change.put(new Document("b", 2).append("a", 1), new Document("n", 2)));
        store.update("shop", (tree, change) -> change.put(new Document("a", 1).append("b", 2), new Document("n", 4)));

        VersionedTree tree = store.read("shop");
        assertThat(tree.items().values()).containsExactlyInAnyOrder(new Document("n", 4), new Document("n", 2));
        assertThat(store.get("shop", new Document("b", 2).append("a", 1))).contains(new Document("n", 2));
        assertThat(store.get("shop", new Document("a", 1).append("b", 2))).contains(new Document("n", 4));
        assertThat(store.readAsOf("shop", 2).items().values()).containsExactlyInAnyOrder(new Document("n", 1),
                new Document("n", 2));

        // one change set cannot hold both: a Java map would keep one of them, so it is refused, nothing written
        assertThatThrownBy(() -> store.update("shop", (current, change) -> change
                .put(new Document("a", 1).append("b", 2), new Document("n", 5))
                .put(new Document("b", 2).append("a", 1), new Document("n", 6))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("field order");
        assertThat(store.read("shop").version()).isEqualTo(3);
        assertThat(store.get("shop", "a")).isEmpty();
        ChangeSet.Builder same = ChangeSet.on("shop", 3).put("x", new Document("n", 1)).put("x", new Document("n", 2));
        assertThat(same.build().changes()).containsOnlyKeys("x");
    }

    @Test
    void shouldCommitRecordsAndReadThemBackAsTheTypeAskedFor(MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).build();
        store.ensureIndexes();
        store.createRoot("shop");

        store.apply(ChangeSet.on("shop", 0).put("shoes", new Product("Shoes", 4_900)).build());
        store.apply(ChangeSet.on("shop", 1).put("shoes", new Product("Shoes", 3_900))
                .put("hats", new Document("title", "Hats").append("price", 1_500L)).build());

        assertThat(store.get("shop", "shoes", Product.class)).contains(new Product("Shoes", 3_900));
        assertThat(store.get("shop", "hats", Product.class)).as("a Document put reads as the record too")
                .contains(new Product("Hats", 1_500));
        assertThat(store.get("shop", "socks", Product.class)).isEqualTo(Optional.empty());
        VersionedTree first = store.readAsOf("shop", 1);
        assertThat(store.decode(first.item("shoes").orElseThrow(), Product.class))
                .isEqualTo(new Product("Shoes", 4_900));
        assertThat(first.item("shoes").orElseThrow()).as("stored as plain fields")
                .isEqualTo(new Document("title", "Shoes").append("price", 4_900L));
        assertThatThrownBy(() -> store.get("shop", "shoes", Label.class)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(Label.class.getName());
    }

    @Test
    void shouldRefuseAValueTheRegistryCannotEncodeBeforeAnyWrite(MongoDatabase db) {
        VersionedStore store = Catalogue.store(db).build();
        store.ensureIndexes();
        store.createRoot("shop");

        assertThatThrownBy(() -> store.apply(ChangeSet.on("shop", 0).put("x", new Object()).build()))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> store.apply(ChangeSet.on("shop", 0).put("x", 42).build()))
                .isInstanceOf(InvalidInputException.class);
        assertThat(store.read("shop").version()).isZero();
    }
}
