package dev.consistencykit.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.consistencykit.core.RetryPolicy;

/**
 * The {@code consistency-kit.*} properties: the database, the start-up and maintenance switches, and one entry per
 * instance of each pattern, keyed by its bean name ({@code consistency-kit.two-phase.payments.lease=30s} makes a
 * {@code TwoPhaseCommit} bean named {@code payments}). An instance's name defaults to its key. A setting left out keeps
 * the pattern's default.
 */
@ConfigurationProperties("consistency-kit")
public class ConsistencyKitProperties {

    /** The database the instances work in; default: the one {@code spring.mongodb.database} or the URI names. */
    private String database;
    /** Whether each instance creates its indexes on start; when off, each still checks them before its first write. */
    private boolean ensureIndexes = true;
    /** The maintenance runner (every instance's recovery and pruning) with the application's lifecycle. */
    private final Maintenance maintenance = new Maintenance();
    /** The health of every instance (with Spring Boot's health module). */
    private final Health health = new Health();
    /** The operator's dashboard page (with consistency-kit-dashboard and a servlet web application). */
    private final Dashboard dashboard = new Dashboard();
    /** Two-phase commit instances by bean name. */
    private final Map<String, Instance> twoPhase = new LinkedHashMap<>();
    /** Job queues by bean name. */
    private final Map<String, JobQueue> jobQueue = new LinkedHashMap<>();
    /** Sync flags by bean name. */
    private final Map<String, SyncFlag> syncFlag = new LinkedHashMap<>();
    /** Ledgers (log reconciliation) by bean name. */
    private final Map<String, Instance> ledger = new LinkedHashMap<>();
    /** Versioned stores by bean name. */
    private final Map<String, Versioning> versioning = new LinkedHashMap<>();

    public String getDatabase() {
        return database;
    }

    public void setDatabase(String database) {
        this.database = database;
    }

    public boolean isEnsureIndexes() {
        return ensureIndexes;
    }

    public void setEnsureIndexes(boolean ensureIndexes) {
        this.ensureIndexes = ensureIndexes;
    }

    public Maintenance getMaintenance() {
        return maintenance;
    }

    public Health getHealth() {
        return health;
    }

    public Dashboard getDashboard() {
        return dashboard;
    }

    public Map<String, Instance> getTwoPhase() {
        return twoPhase;
    }

    public Map<String, JobQueue> getJobQueue() {
        return jobQueue;
    }

    public Map<String, SyncFlag> getSyncFlag() {
        return syncFlag;
    }

    public Map<String, Instance> getLedger() {
        return ledger;
    }

    public Map<String, Versioning> getVersioning() {
        return versioning;
    }

    /** The maintenance runner. */
    public static class Maintenance {
        /** Whether the runner starts with the application. */
        private boolean enabled = true;
        /** How long a stop waits for a running step. */
        private Duration shutdownGrace = Duration.ofSeconds(10);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getShutdownGrace() {
            return shutdownGrace;
        }

        public void setShutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = shutdownGrace;
        }
    }

    /** The health of every instance. */
    public static class Health {
        /** How long an operation stands without progress before the health details list it as interrupted. */
        private Duration interruptedAfter = Duration.ofMinutes(5);
        /** Down at this many dead jobs in one instance; 0 (the default): dead jobs are details, never down. */
        private int deadJobsDownAt;
        /** Down at this many interrupted operations in one instance; 0 (the default): details, never down. */
        private int interruptedDownAt;
        /** Down once an instance's recovery has failed this many times in a row; 0 turns this off. */
        private int recoveryFailuresDownAt = 3;

        public Duration getInterruptedAfter() {
            return interruptedAfter;
        }

        public void setInterruptedAfter(Duration interruptedAfter) {
            this.interruptedAfter = interruptedAfter;
        }

        public int getDeadJobsDownAt() {
            return deadJobsDownAt;
        }

        public void setDeadJobsDownAt(int deadJobsDownAt) {
            this.deadJobsDownAt = deadJobsDownAt;
        }

        public int getInterruptedDownAt() {
            return interruptedDownAt;
        }

        public void setInterruptedDownAt(int interruptedDownAt) {
            this.interruptedDownAt = interruptedDownAt;
        }

        public int getRecoveryFailuresDownAt() {
            return recoveryFailuresDownAt;
        }

        public void setRecoveryFailuresDownAt(int recoveryFailuresDownAt) {
            this.recoveryFailuresDownAt = recoveryFailuresDownAt;
        }
    }

    /** The operator's dashboard, served under a path of the application; off unless enabled. */
    public static class Dashboard {
        /** Whether the application serves the dashboard (needs consistency-kit-dashboard on the class path). */
        private boolean enabled;
        /** The path the page and its API are served under (the page at path + "/"). */
        private String path = "/consistency-kit";
        /** Whether the page may recover and replay; then each action needs the token. */
        private boolean actionsEnabled;
        /** The secret an action's request carries (header X-Consistency-Kit-Token); at least 16 characters. */
        private String token;
        /** How long an operation stands without progress before the page shows it interrupted. */
        private Duration staleAfter = Duration.ofMinutes(1);
        /** How often the page polls. */
        private Duration refreshEvery = Duration.ofSeconds(2);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPath() {
            return path;
        }

        public void setPath(String path) {
            this.path = path;
        }

        public boolean isActionsEnabled() {
            return actionsEnabled;
        }

        public void setActionsEnabled(boolean actionsEnabled) {
            this.actionsEnabled = actionsEnabled;
        }

        public String getToken() {
            return token;
        }

        public void setToken(String token) {
            this.token = token;
        }

        public Duration getStaleAfter() {
            return staleAfter;
        }

        public void setStaleAfter(Duration staleAfter) {
            this.staleAfter = staleAfter;
        }

        public Duration getRefreshEvery() {
            return refreshEvery;
        }

        public void setRefreshEvery(Duration refreshEvery) {
            this.refreshEvery = refreshEvery;
        }
    }

    /**
     * What every instance has beside its pattern's settings. Every setting of a pattern's configuration is a property
     * of its instance by the setting's name ({@code name}, {@code operation-timeout}, {@code stale-after},
     * {@code lease}, {@code max-pending-per-document}…: {@link InstanceSettings}); these classes hold only the
     * properties that are not one setting's plain value.
     */
    public static class Instance {
        /** The retry of transient errors; each value left out keeps {@code RetryPolicy.DEFAULT}'s. */
        private final Retry retryPolicy = new Retry();

        public Retry getRetryPolicy() {
            return retryPolicy;
        }
    }

    /** The components of a {@code RetryPolicy}. */
    public static class Retry {
        /** Attempts in all, at least 1 (default 5). */
        private Integer maxAttempts;
        /** The delay before the second attempt (default 10 ms). */
        private Duration initialBackoff;
        /** The largest delay (default 1 s). */
        private Duration maxBackoff;
        /** Growth of the delay per attempt, at least 1 (default 2). */
        private Double multiplier;
        /** Fraction of each delay drawn at random, in [0, 1] (default 0.5). */
        private Double jitter;

        public Integer getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getInitialBackoff() {
            return initialBackoff;
        }

        public void setInitialBackoff(Duration initialBackoff) {
            this.initialBackoff = initialBackoff;
        }

        public Duration getMaxBackoff() {
            return maxBackoff;
        }

        public void setMaxBackoff(Duration maxBackoff) {
            this.maxBackoff = maxBackoff;
        }

        public Double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(Double multiplier) {
            this.multiplier = multiplier;
        }

        public Double getJitter() {
            return jitter;
        }

        public void setJitter(Double jitter) {
            this.jitter = jitter;
        }

        /** {@code defaults} with the components given here. */
        RetryPolicy over(RetryPolicy defaults) {
            return new RetryPolicy(maxAttempts != null ? maxAttempts : defaults.maxAttempts(),
                    initialBackoff != null ? initialBackoff : defaults.initialBackoff(),
                    maxBackoff != null ? maxBackoff : defaults.maxBackoff(),
                    multiplier != null ? multiplier : defaults.multiplier(),
                    jitter != null ? jitter : defaults.jitter());
        }
    }

    /** A job queue's workers and outbox relays, which the application runs. */
    public static class JobQueue extends Instance {
        /** Worker threads started with the application (0: none; the application runs jobs itself). */
        private int workers;
        /** How long a stop waits for running jobs before it gives the rest back to the queue. */
        private Duration shutdownGrace = Duration.ofSeconds(10);
        /**
         * The threads the workers run on: {@code platform}, or {@code virtual} (Java 21 or later: many workers
         * waiting on the server without a platform thread each). The start fails on an older runtime.
         */
        private WorkerThreadType workerThreads = WorkerThreadType.PLATFORM;
        /**
         * Business collections the application writes jobs with ({@code insertWith}, {@code upsertWith},
         * {@code enqueueWith}): each gets its outbox index and a relay in maintenance.
         */
        private List<String> outboxCollections = new ArrayList<>();
        /** How often each outbox collection is relayed. */
        private Duration relayEvery = Duration.ofSeconds(5);
        /**
         * Recurring jobs by name, applied at start: each one's definition registered (a changed one replaces the
         * stored one), each one switched off ({@code enabled=false}) removed; and once any is declared, every other
         * recurring job of the queue removed too, unless {@code keep-undeclared-schedules}.
         */
        private final Map<String, DeclaredSchedule> schedules = new LinkedHashMap<>();
        /** Keep the queue's recurring jobs that {@code schedules} does not name (registered by code). */
        private boolean keepUndeclaredSchedules;

        public Map<String, DeclaredSchedule> getSchedules() {
            return schedules;
        }

        public boolean isKeepUndeclaredSchedules() {
            return keepUndeclaredSchedules;
        }

        public void setKeepUndeclaredSchedules(boolean keepUndeclaredSchedules) {
            this.keepUndeclaredSchedules = keepUndeclaredSchedules;
        }

        public List<String> getOutboxCollections() {
            return outboxCollections;
        }

        public void setOutboxCollections(List<String> outboxCollections) {
            this.outboxCollections = outboxCollections;
        }

        public Duration getRelayEvery() {
            return relayEvery;
        }

        public void setRelayEvery(Duration relayEvery) {
            this.relayEvery = relayEvery;
        }

        public int getWorkers() {
            return workers;
        }

        public void setWorkers(int workers) {
            this.workers = workers;
        }

        public Duration getShutdownGrace() {
            return shutdownGrace;
        }

        public void setShutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = shutdownGrace;
        }

        public WorkerThreadType getWorkerThreads() {
            return workerThreads;
        }

        public void setWorkerThreads(WorkerThreadType workerThreads) {
            this.workerThreads = workerThreads;
        }
    }

    /** A recurring job declared in properties: a cron expression or a fixed delay, and the job each occurrence runs. */
    public static class DeclaredSchedule {
        /** A cron expression (five fields, or six with seconds), in {@code zone}. */
        private String cron;
        /** The time zone of {@code cron} (default UTC). */
        private String zone;
        /** The delay between the end of one run's firing and the next; instead of {@code cron}. */
        private Duration fixedDelay;
        /** What happens to occurrences missed while nothing fired: {@code skip}, {@code once} or {@code each}. */
        private String missedRuns;
        /** The job type each occurrence enqueues (a handler's type). */
        private String type;
        /** The job's payload, as JSON ({@code {"report": "daily"}}); default an empty document. */
        private String payload;
        /** Whether the recurring job exists; {@code false} removes it (switched off in this environment). */
        private boolean enabled = true;

        public String getCron() {
            return cron;
        }

        public void setCron(String cron) {
            this.cron = cron;
        }

        public String getZone() {
            return zone;
        }

        public void setZone(String zone) {
            this.zone = zone;
        }

        public Duration getFixedDelay() {
            return fixedDelay;
        }

        public void setFixedDelay(Duration fixedDelay) {
            this.fixedDelay = fixedDelay;
        }

        public String getMissedRuns() {
            return missedRuns;
        }

        public void setMissedRuns(String missedRuns) {
            this.missedRuns = missedRuns;
        }

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }

        public String getPayload() {
            return payload;
        }

        public void setPayload(String payload) {
            this.payload = payload;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The threads a job queue's workers run on. */
    public enum WorkerThreadType {
        /** Platform threads. */
        PLATFORM,
        /** Virtual threads (Java 21 or later). */
        VIRTUAL
    }

    /** A sync flag's master collection and where its fields are copied. */
    public static class SyncFlag extends Instance {
        /** The master collection. */
        private String masterCollection;
        /** The master's fields that are copied. */
        private List<String> masterFields = new ArrayList<>();
        /** Where they are copied. */
        private List<Target> targets = new ArrayList<>();

        public String getMasterCollection() {
            return masterCollection;
        }

        public void setMasterCollection(String masterCollection) {
            this.masterCollection = masterCollection;
        }

        public List<String> getMasterFields() {
            return masterFields;
        }

        public void setMasterFields(List<String> masterFields) {
            this.masterFields = masterFields;
        }

        public List<Target> getTargets() {
            return targets;
        }

        public void setTargets(List<Target> targets) {
            this.targets = targets;
        }
    }

    /** Where a sync flag's copies live. */
    public static class Target {
        /** The collection holding the copies. */
        private String collection;
        /** The field of a copy's document that holds the master's id. */
        private String idField;
        /** The array whose subdocuments hold the copies, when they are inside one (default: the document itself). */
        private String arrayField;
        /** The field that keeps each copy's version (default: none). */
        private String versionField;
        /** Master field → the field of the copy. */
        private Map<String, String> copies = new LinkedHashMap<>();

        public String getCollection() {
            return collection;
        }

        public void setCollection(String collection) {
            this.collection = collection;
        }

        public String getIdField() {
            return idField;
        }

        public void setIdField(String idField) {
            this.idField = idField;
        }

        public String getArrayField() {
            return arrayField;
        }

        public void setArrayField(String arrayField) {
            this.arrayField = arrayField;
        }

        public String getVersionField() {
            return versionField;
        }

        public void setVersionField(String versionField) {
            this.versionField = versionField;
        }

        public Map<String, String> getCopies() {
            return copies;
        }

        public void setCopies(Map<String, String> copies) {
            this.copies = copies;
        }
    }

    /** A versioned store's retention. */
    public static class Versioning extends Instance {
        /** Keep the last this many versions of each root (default: every version). */
        private Integer keepLast;
        /** Keep the versions committed within this age and the current one (default: all); not with keep-last. */
        private Duration keepNewerThan;

        public Integer getKeepLast() {
            return keepLast;
        }

        public void setKeepLast(Integer keepLast) {
            this.keepLast = keepLast;
        }

        public Duration getKeepNewerThan() {
            return keepNewerThan;
        }

        public void setKeepNewerThan(Duration keepNewerThan) {
            this.keepNewerThan = keepNewerThan;
        }
    }
}
