package dev.consistencykit.jobqueue.internal;

import java.time.Duration;

import org.bson.Document;

import dev.consistencykit.core.OperationId;

/**
 * A validated job in stored form (everything but the server-stamped times).
 *
 * @param id     the job's id
 * @param fields its stored fields
 * @param delay  how long after it is recorded it is due
 */
public record EncodedJob(Object id, Document fields, Duration delay) {

    OperationId operationId() {
        return new OperationId(id);
    }
}
