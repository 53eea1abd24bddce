package dev.consistencykit.core.spi;

import org.bson.Document;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

import dev.consistencykit.core.OutcomeUnknownException;
import dev.consistencykit.core.UnsafeConfigurationException;

/**
 * Confirms the write concern of a write found rather than made. When an insert-by-upsert is retried after a
 * write-concern error and finds its own document (a duplicate key), the document is there but nothing has confirmed
 * that it is replicated as the write concern asks: the first attempt's acknowledgement said it was not (yet). One
 * no-op write with the collection's write concern confirms it, because a write's write concern covers every write
 * the server applied before it.
 *
 * <p>Stateless and thread-safe.
 */
public final class WriteConcerns {

    /** A field no document carries: the confirming write matches nothing and changes nothing. */
    private static final String NEVER = "_ckWriteConcernProbe";

    private WriteConcerns() {
    }

    /**
     * Confirms, with one no-op write on {@code collection} under its write concern, that the writes applied so far
     * (among them {@code documentId}'s) satisfy that write concern.
     *
     * @throws OutcomeUnknownException if the write concern still cannot be confirmed: the write exists on the primary
     *                                 but may not survive a failover
     */
    public static void confirm(MongoCollection<Document> collection, Object documentId, String instanceName,
                               String what) {
        try {
            collection.updateOne(Filters.and(Filters.eq("_id", documentId), Filters.exists(NEVER)),
                    Updates.set(NEVER, true));
        } catch (MongoWriteConcernException e) {
            throw new OutcomeUnknownException(instanceName, documentId, what + ": the write is on the primary, but"
                    + " its write concern " + collection.getWriteConcern() + " could not be confirmed: "
                    + e.getWriteConcernError().getMessage(), e);
        }
    }
    /**
     * Refuses an unacknowledged write concern ({@code w:0}): with it the server may silently drop a write,
     * and no outcome can be classified.
     *
     * @return {@code writeConcern}
     * @throws UnsafeConfigurationException if it is unacknowledged
     */
    public static WriteConcern acknowledged(String instanceName, WriteConcern writeConcern) {
        if (writeConcern == null) {
            throw new UnsafeConfigurationException(instanceName, "write concern must not be null");
        }
        if (!writeConcern.isAcknowledged()) {
            throw new UnsafeConfigurationException(instanceName, "unacknowledged write concern " + writeConcern
                    + " is refused: with w:0 the server may drop writes silently and no outcome can be"
                    + " classified; use WriteConcern.ACKNOWLEDGED or MAJORITY");
        }
        return writeConcern;
    }

    /** {@link #acknowledged(String, WriteConcern)} for a database's write concern. */
    public static MongoDatabase acknowledged(String instanceName, MongoDatabase database) {
        acknowledged(instanceName, database.getWriteConcern());
        return database;
    }

    /** {@link #acknowledged(String, WriteConcern)} for a collection's write concern. */
    public static <T> MongoCollection<T> acknowledged(String instanceName, MongoCollection<T> collection) {
        acknowledged(instanceName, collection.getWriteConcern());
        return collection;
    }
}
