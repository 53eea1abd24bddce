package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.in;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;

import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoCollection;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.twophase.ConsistentRead;
import dev.consistencykit.twophase.SettledRead;
import dev.consistencykit.twophase.TwoPhaseConfig;

/** The readers' reads of participants: consistent (transactions in flight placed by their records) and settled. */
public final class TransactionReads {

    private final TwoPhaseConfig config;
    private final TransactionStore store;
    private final ConsistentReader reader;

    TransactionReads(TwoPhaseConfig config, TransactionStore store, ConsistentReader reader) {
        this.config = config;
        this.store = store;
        this.reader = reader;
    }

    /** {@link ConsistentReader#read} of ids already checked. */
    ConsistentRead readChecked(String collectionName, List<Object> ids) {
        return reader.read(collectionName, ids);
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#readConsistent}. */
    public ConsistentRead readConsistent(String collectionName, List<?> ids) {
        return reader.read(collectionName, checkedIds(collectionName, ids));
    }

    private List<Object> checkedIds(String collectionName, List<?> ids) {
        Names.fieldName(config.name(), "collection", collectionName);
        Objects.requireNonNull(ids, "ids");
        List<Object> checked = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            checked.add(Ids.documentId(config.name(), "ids[" + i + "]", ids.get(i), store.codecs()));
        }
        return checked;
    }

    /** See {@link dev.consistencykit.twophase.TwoPhaseCommit#readSettled}. */
    public SettledRead readSettled(String collectionName, List<?> ids, Duration maxWait) {
        ids = checkedIds(collectionName, ids);
        Objects.requireNonNull(maxWait, "maxWait");
        MongoCollection<Document> collection = store.participants(collectionName)
                .withReadPreference(ReadPreference.primary());
        Instant deadline = Instant.now().plus(maxWait);
        long backoff = 1;
        List<Object> pending = List.of();
        while (true) {
            // every read is bounded by what is left of maxWait, so a hung server cannot hold the caller longer
            // and by the instance's operation timeout, whichever ends first
            long left = Math.max(1, Duration.between(Instant.now(), deadline).toMillis());
            Long own = collection.getTimeout(TimeUnit.MILLISECONDS);
            boolean boundByWait = own == null || own == 0 || left <= own;
            MongoCollection<Document> bounded = collection.withTimeout(boundByWait ? left : own,
                    TimeUnit.MILLISECONDS);
            try {
                List<Document> first = readOrdered(bounded, ids);
                pending = pendingOn(first);
                if (pending.isEmpty()) {
                    List<Document> second = readOrdered(bounded, ids);
                    if (second.equals(first)) {
                        return new SettledRead(second, List.of());
                    }
                    pending = pendingOn(second);
                }
            } catch (MongoOperationTimeoutException e) {
                if (!boundByWait) {
                    throw e;   // the instance's own operation timeout, not maxWait: the server is slow or gone
                }
                // maxWait ran out during a read: not settled within the wait, which is an answer, not a failure
                return new SettledRead(List.of(), pending.isEmpty() ? List.of("(changing)") : pending);
            }
            if (!Instant.now().plusMillis(backoff).isBefore(deadline)) {
                return new SettledRead(List.of(), pending.isEmpty() ? List.of("(changing)") : pending);
            }
            sleep(backoff);
            backoff = Math.min(backoff * 2, 50);
        }
    }

    static List<Document> readOrdered(MongoCollection<Document> collection, List<?> ids) {
        Map<Object, Document> byId = new HashMap<>();
        CodecRegistry registry = collection.getCodecRegistry();
        collection.find(in("_id", ids)).forEach(d -> byId.put(Ids.idKey(d.get("_id"), registry), d));
        List<Document> ordered = new ArrayList<>();
        for (Object id : ids) {
            Document d = byId.get(Ids.idKey(id, registry));
            if (d != null) {
                ordered.add(d);
            }
        }
        return ordered;
    }

    List<Object> pendingOn(List<Document> documents) {
        List<Object> pending = new ArrayList<>();
        for (Document d : documents) {
            pending.addAll(store.marker().inFlight(d));
        }
        return pending;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConsistencyException(null, null, "interrupted while waiting for a settled read");
        }
    }
}
