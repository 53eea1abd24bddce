package dev.consistencykit.jobqueue.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.bson.Document;

import dev.consistencykit.core.OperationId;
import dev.consistencykit.core.spi.Names;

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

    /**
     * This job carrying {@code carried} to its run ({@link JobSchema#TRACE}): the entries whose name is a field name
     * and whose text is at most {@value JobSchema#MAX_TRACE_CHARS} characters, at most
     * {@value JobSchema#MAX_TRACE_ENTRIES}; itself when none is left.
     */
    public EncodedJob carrying(Map<String, String> carried) {
        Document trace = new Document();
        for (Map.Entry<String, String> e : carried.entrySet()) {
            if (trace.size() < JobSchema.MAX_TRACE_ENTRIES && e.getKey() != null && Names.isFieldName(e.getKey())
                    && e.getValue() != null && e.getValue().length() <= JobSchema.MAX_TRACE_CHARS) {
                trace.append(e.getKey(), e.getValue());
            }
        }
        return trace.isEmpty() ? this : new EncodedJob(id, new Document(fields).append(JobSchema.TRACE, trace), delay);
    }

    /** What the stored job {@code job} carries to its run: its {@link JobSchema#TRACE} entries that are text. */
    public static Map<String, String> carriedBy(Document job) {
        if (!(job.get(JobSchema.TRACE) instanceof Document trace)) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        trace.forEach((k, v) -> {
            if (out.size() < JobSchema.MAX_TRACE_ENTRIES && v instanceof String text
                    && text.length() <= JobSchema.MAX_TRACE_CHARS && Names.isFieldName(k)) {
                out.put(k, text);
            }
        });
        return out;
    }
}
