package dev.consistencykit.spring;

/**
 * One recurring job of a job queue as the {@code consistencykit} endpoint shows it: its schedule, and its next and last
 * runs (ISO-8601, or null).
 *
 * @param name     the schedule's name
 * @param schedule when it runs, in words
 * @param type     the type of the job each occurrence enqueues
 * @param nextRun  when its next occurrence is due, or null
 * @param lastRun  the time of the last occurrence fired, or null
 * @param lastJob  the id of the job that occurrence enqueued, or null
 */
public record RecurringJobView(String name, String schedule, String type, String nextRun, String lastRun,
                               String lastJob) {
}
