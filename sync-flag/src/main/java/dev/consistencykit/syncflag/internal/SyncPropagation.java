package dev.consistencykit.syncflag.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Filters.or;
import static dev.consistencykit.syncflag.internal.SyncFields.ELEMENT;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG;
import static dev.consistencykit.syncflag.internal.SyncFields.FLAG_OP;
import static dev.consistencykit.syncflag.internal.SyncFields.LOG;
import static dev.consistencykit.syncflag.internal.SyncFields.valueAt;
import static dev.consistencykit.syncflag.internal.SyncFields.versionOf;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;

import dev.consistencykit.syncflag.SyncFlagConfig;
import dev.consistencykit.syncflag.SyncFlagListener.Source;
import dev.consistencykit.syncflag.SyncTarget;
import dev.consistencykit.syncflag.internal.SyncFields.Value;

/**
 * The per-target steps: one {@code updateMany} per target that moves every older copy to the master's values.
 */
final class SyncPropagation {

    private final SyncFields fields;
    private final SyncFlagConfig config;

    /** The propagation to the copies, over the shared fields. */
    SyncPropagation(SyncFields fields) {
        this.fields = fields;
        this.config = fields.config;
    }

    // ---------------------------------------------------------------- propagation

    record Propagated(long written, boolean cleared) {
    }

    /**
     * Writes {@code master}'s values (as read together with its version) to every copy with a lower version, then
     * clears the flag if it is still the one {@code master} carried.
     */
    Propagated propagate(Document master, Source source) {
        Object masterId = master.get("_id");
        long version = versionOf(master);
        Document flag = master.get(FLAG, Document.class);
        long written = 0;
        for (Map.Entry<SyncTarget, MongoCollection<Document>> t : fields.targets.entrySet()) {
            written += writeCopies(t.getKey(), t.getValue(), masterId, master, version);
        }
        boolean cleared = false;
        if (flag != null) {
            Object op = flag.get("op");
            // only our own flag: a newer update's flag means its propagation is still to come
            cleared = config.retryPolicy().execute(config.name(), masterId, "clear flag",
                    () -> fields.masters.updateOne(and(eq("_id", masterId), eq(FLAG_OP, op)), Updates.unset(FLAG))
                            .getModifiedCount()) > 0;
        }
        fields.propagations.increment();
        (source == Source.UPDATE ? fields.copiesWritten : fields.copiesRepaired).add(written);
        if (!cleared) {
            fields.flagsLeft.increment();
        }
        long total = written;
        boolean wasCleared = cleared;
        LOG.debug("[{}] propagated master {} version {}: {} copies written, flag {} ({})", config.name(), masterId,
                version, written, cleared ? "cleared" : "left", source);
        fields.notify(() -> fields.listener.onPropagated(masterId, version, total, wasCleared, source));
        return new Propagated(written, cleared);
    }

    long writeCopies(SyncTarget target, MongoCollection<Document> collection, Object masterId,
                             Document master, long version) {
        List<Bson> sets = new ArrayList<>();
        for (Map.Entry<String, String> copy : target.copies().entrySet()) {
            Value value = valueAt(master, copy.getKey());
            String to = target.arrayField().isPresent()
                    ? target.arrayField().get() + ".$[" + ELEMENT + "]." + copy.getValue() : copy.getValue();
            sets.add(value.present() ? Updates.set(to, value.value()) : Updates.unset(to));
        }
        String versionPath = target.arrayField().isPresent()
                ? target.arrayField().get() + ".$[" + ELEMENT + "]." + target.versionField() : target.versionField();
        sets.add(Updates.set(versionPath, version));
        Bson update = Updates.combine(sets);
        // the version guard: a copy already written from this version or a newer one is left alone, so a delayed
        // writer can never put an older value back, and repeats are free
        Bson older = not(gte(target.versionField(), version));
        Bson filter;
        UpdateOptions options = new UpdateOptions();
        if (target.arrayField().isPresent()) {
            filter = elemMatch(target.arrayField().get(), and(eq(target.idField(), masterId), older));
            options.arrayFilters(List.of(new Document(ELEMENT + "." + target.idField(), masterId)
                    .append(ELEMENT + "." + target.versionField(), new Document("$not",
                            new Document("$gte", version)))));
        } else {
            filter = and(eq(target.idField(), masterId), older);
        }
        return config.retryPolicy().execute(config.name(), masterId, "write copies in " + target.collection(),
                () -> collection.updateMany(filter, update, options).getModifiedCount());
    }
}
