package dev.consistencykit.core;

import org.bson.Document;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;

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
}
