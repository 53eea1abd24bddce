package dev.consistencykit.jobqueue.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.bson.Document;

/**
 * The hooks of one queue's features, called in the order {@link JobParts} gave them: a part that moves a job tells
 * them all, and each acts on the moments it implements ({@link JobHook}).
 */
final class JobHooks {

    private final List<JobHook> hooks;

    JobHooks(List<JobHook> hooks) {
        this.hooks = List.copyOf(hooks);
    }

    /** These hooks, then {@code more} (recovery's, which also finishes what parts made after these left). */
    JobHooks with(JobHook... more) {
        List<JobHook> all = new ArrayList<>(hooks);
        all.addAll(List.of(more));
        return new JobHooks(all);
    }

    void recorded(Object jobId, Document fields, Object lineNonce) {
        hooks.forEach(h -> h.recorded(jobId, fields, lineNonce));
    }

    void ended(JobHook.EndedJob ended) {
        hooks.forEach(h -> h.ended(ended));
    }

    void failed(Object jobId, String type, int attempt, String error, Throwable thrown) {
        hooks.forEach(h -> h.failed(jobId, type, attempt, error, thrown));
    }

    void requeued(Object jobId, String type) {
        hooks.forEach(h -> h.requeued(jobId, type));
    }

    void leaseLost(Object jobId, String type) {
        hooks.forEach(h -> h.leaseLost(jobId, type));
    }

    void recover(Duration staleAfter) {
        hooks.forEach(h -> h.recover(staleAfter));
    }
}
