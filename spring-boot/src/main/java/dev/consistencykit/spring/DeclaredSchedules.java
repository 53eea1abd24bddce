package dev.consistencykit.spring;

import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.bson.BsonInvalidOperationException;
import org.bson.Document;
import org.bson.json.JsonParseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.RecurringJob;
import dev.consistencykit.jobqueue.Schedule;

/**
 * The recurring jobs each job queue's properties declare ({@code consistency-kit.job-queue.<q>.schedules.<name>.*}),
 * applied at start: every enabled one registered (the same definition writes nothing; a changed one replaces the
 * stored one), every one switched off removed, and, once a queue declares any, its other recurring jobs removed
 * unless {@code keep-undeclared-schedules}. Every process applies the same properties, so starting several at once
 * converges on them. Its own class, so that nothing of the job queue's loads without its module.
 */
final class DeclaredSchedules {

    private static final Logger LOG = LoggerFactory.getLogger(DeclaredSchedules.class);
    private static final int PAGE = 100;

    private DeclaredSchedules() {
    }

    /** Applies every job queue bean's declared schedules. */
    static void apply(ListableBeanFactory beans, ConsistencyKitProperties properties) {
        properties.getJobQueue().forEach((key, queueProperties) -> {
            if (!queueProperties.getSchedules().isEmpty() && beans.containsBean(key)) {
                apply(key, beans.getBean(key, JobQueue.class), queueProperties);
            }
        });
    }

    static void apply(String key, JobQueue queue, ConsistencyKitProperties.JobQueue properties) {
        Set<String> declared = new TreeSet<>();
        for (Map.Entry<String, ConsistencyKitProperties.DeclaredSchedule> e : properties.getSchedules().entrySet()) {
            String name = e.getKey();
            String prefix = "consistency-kit.job-queue." + key + ".schedules." + name;
            ConsistencyKitProperties.DeclaredSchedule d = e.getValue();
            declared.add(name);
            if (!d.isEnabled()) {
                if (queue.unschedule(name)) {
                    LOG.info("[{}] recurring job '{}' removed: {}.enabled=false", key, name, prefix);
                }
                continue;
            }
            try {
                queue.schedule(name, schedule(prefix, d), JobRequest.of(required(prefix + ".type", d.getType()),
                        payload(prefix, d.getPayload())));
            } catch (InvalidInputException refused) {
                throw new IllegalStateException("consistency-kit: " + prefix + ": " + refused.getMessage(), refused);
            }
        }
        if (properties.isKeepUndeclaredSchedules()) {
            return;
        }
        List<String> others = new ArrayList<>();
        for (int skip = 0; ; skip += PAGE) {
            List<RecurringJob> page = queue.operator().recurringJobs(skip, PAGE);
            page.stream().map(RecurringJob::name).filter(n -> !declared.contains(n)).forEach(others::add);
            if (page.size() < PAGE) {
                break;
            }
        }
        for (String name : others) {
            if (queue.unschedule(name)) {
                LOG.info("[{}] recurring job '{}' removed: consistency-kit.job-queue.{}.schedules does not declare"
                        + " it (keep-undeclared-schedules=true keeps it)", key, name, key);
            }
        }
    }

    private static Schedule schedule(String prefix, ConsistencyKitProperties.DeclaredSchedule d) {
        if ((d.getCron() == null) == (d.getFixedDelay() == null)) {
            throw new IllegalStateException("consistency-kit: " + prefix + " needs either cron or fixed-delay, not "
                    + (d.getCron() == null ? "neither" : "both"));
        }
        Schedule.MissedRuns policy = null;
        if (d.getMissedRuns() != null) {
            String name = d.getMissedRuns().trim().replace('-', '_').toUpperCase(Locale.ROOT);
            policy = List.of(Schedule.MissedRuns.values()).stream().filter(p -> p.name().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalStateException("consistency-kit: " + prefix + ".missed-runs="
                            + d.getMissedRuns() + " is none of " + List.of(Schedule.MissedRuns.values())));
        }
        try {
            Schedule schedule;
            if (d.getCron() != null) {
                schedule = d.getZone() == null ? Schedule.cron(d.getCron())
                        : Schedule.cron(d.getCron(), ZoneId.of(d.getZone()));
            } else if (d.getZone() != null) {
                throw new IllegalArgumentException("zone applies to a cron schedule only");
            } else {
                schedule = Schedule.fixedDelay(d.getFixedDelay());
            }
            return policy == null ? schedule : schedule.missedRuns(policy);
        } catch (IllegalArgumentException | IllegalStateException | DateTimeException refused) {
            throw new IllegalStateException("consistency-kit: " + prefix + ": " + refused.getMessage(), refused);
        }
    }

    private static String required(String property, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("consistency-kit: " + property + " is required");
        }
        return value;
    }

    private static Document payload(String prefix, String json) {
        if (json == null || json.isBlank()) {
            return new Document();
        }
        try {
            return Document.parse(json);
        } catch (JsonParseException | BsonInvalidOperationException | IllegalArgumentException notJson) {
            throw new IllegalStateException("consistency-kit: " + prefix + ".payload is no JSON document: "
                    + notJson.getMessage(), notJson);
        }
    }
}
