package dev.consistencykit.versioning;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.testkit.ChaosRunner;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ChaosTest {

    static final int SEEDS = 200;

    /**
     * Writers on one root: read-modify-write updates (retried on conflict), blind commits and staged change sets,
     * each carrying the checksum of the state it makes; random crashes, transient errors and pauses; two recoverers.
     */
    static ChaosRunner runner(MongoClient client) {
        return ChaosRunner.builder(client)
                .name("versions")
                .workers(6)
                .operationsPerWorker(4)
                .faultRate(0.08)
                .maxPause(Duration.ofMillis(15))
                .recoverers(2)
                .setup(db -> Catalogue.seed(db, Catalogue.products(4)))
                .operation(ctx -> {
                    VersionedStore store = Catalogue.store(ctx.database()).conflictAttempts(3).build();
                    String item = "i" + ctx.random().nextInt(6);
                    boolean delete = ctx.random().nextInt(4) == 0;
                    Document value = Catalogue.product("w" + ctx.worker() + "-" + ctx.sequence(),
                            ctx.random().nextInt(1_000));
                    int kind = ctx.random().nextInt(3);
                    if (kind == 0) {
                        store.update(Catalogue.ROOT, (tree, change) -> edit(tree, change, item, delete, value));
                        return;
                    }
                    VersionedTree tree = store.read(Catalogue.ROOT);
                    ChangeSet.Builder change = ChangeSet.on(Catalogue.ROOT, tree.version())
                            .id(OperationId.of("w" + ctx.worker() + "-" + ctx.incarnation() + "-" + ctx.sequence()));
                    edit(tree, change, item, delete, value);
                    if (kind == 1) {
                        store.apply(change.build());
                    } else {
                        store.submit(change.build());
                    }
                })
                .recovery(db -> Catalogue.store(db).build().recover(Duration.ZERO))
                .invariants(db -> Catalogue.invariants(db, null))
                .build();
    }

    private static void edit(VersionedTree tree, ChangeSet.Builder change, String item, boolean delete,
                             Document value) {
        Map<Object, Document> next = new HashMap<>(tree.items());
        if (delete) {
            change.delete(item);
            next.remove(item);
        } else {
            change.put(item, value);
            next.put(item, value);
        }
        change.meta(Catalogue.checksum(next));
    }

    @Test
    void shouldKeepEveryVersionWholeAcross200Seeds(MongoClient client) {
        ChaosRunner.Summary summary = runner(client).runSeeds(1, SEEDS);

        assertThat(summary.seeds()).isEqualTo(SEEDS);
        assertThat(summary.crashes()).isPositive();
        assertThat(summary.failures()).as(summary.toString()).isEmpty();
    }
}
