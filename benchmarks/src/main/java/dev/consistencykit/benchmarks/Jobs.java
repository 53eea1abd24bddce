package dev.consistencykit.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.bson.Document;
import org.jobrunr.jobs.mappers.JobMapper;
import org.jobrunr.scheduling.JobBuilder;
import org.jobrunr.scheduling.JobScheduler;
import org.jobrunr.server.BackgroundJobServer;
import org.jobrunr.server.BackgroundJobServerConfiguration;
import org.jobrunr.server.JobActivator;
import org.jobrunr.storage.StorageProviderUtils;
import org.jobrunr.storage.nosql.mongo.MongoDBStorageProvider;
import org.jobrunr.utils.mapper.JsonMapper;
import org.jobrunr.utils.mapper.gson.GsonJsonMapper;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;

import dev.consistencykit.jobqueue.JobQueue;
import dev.consistencykit.jobqueue.JobRequest;
import dev.consistencykit.jobqueue.JobWorkers;

/**
 * The job-queue workload: a job enqueued, run by a worker, and marked done; as many workers as callers. The
 * documents of a size are jobs scheduled a year ahead, waiting in the same collection.
 */
public final class Jobs {

    /** How far ahead the waiting jobs are scheduled. */
    static final Duration WAITING = Duration.ofDays(365);

    /** The phase whose jobs JobRunr's workers report to (JobRunr runs a static method). */
    private static volatile Windowed current = new Windowed();

    private Jobs() {
    }

    /** The job JobRunr runs: item {@code token} is done. Public, as JobRunr calls it by reflection. */
    public static void done(long token) {
        if (token >= 0) {
            current.done(token);
        }
    }

    /** consistency-kit's job queue. */
    static final class Ours implements Side {

        private final MongoDatabase db;
        private final Windowed windowed = new Windowed();
        private JobQueue queue;
        /** Started once per number of workers and left running, as an application runs them. */
        private JobWorkers workers;

        Ours(MongoClient client) {
            this.db = client.getDatabase("peers_job_queue");
        }

        @Override
        public String name() {
            return "consistency-kit job queue";
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            db.drop();
            queue = JobQueue.builder(db).handler("bench", ctx -> windowed.done(ctx.payload().getLong("token")))
                    .build();
            queue.ensureIndexes();
            Fill.parallel(documents, i -> queue.enqueue(JobRequest.of("bench", new Document("token", -1L))
                    .delayedBy(WAITING)));
        }

        @Override
        public Phase run(int callers, Duration duration) {
            if (workers == null || workers.health().workers() != callers) {
                stopWorkers();
                workers = queue.startWorkers(callers);
            }
            return windowed.run(callers, duration, token -> queue.enqueue(JobRequest.of("bench",
                    new Document("token", token))));
        }

        private void stopWorkers() {
            if (workers != null) {
                workers.stop(Duration.ofSeconds(30));
                workers = null;
            }
        }

        @Override
        public List<String> check() {
            return problems(windowed);
        }

        @Override
        public void close() {
            stopWorkers();
        }
    }

    static List<String> problems(Windowed windowed) {
        List<String> problems = new ArrayList<>();
        if (windowed.duplicates() > 0) {
            problems.add(windowed.duplicates() + " jobs ran more than once");
        }
        if (windowed.outstanding() > 0) {
            problems.add(windowed.outstanding() + " jobs enqueued never ran");
        }
        return problems;
    }

    /**
     * JobRunr with its MongoDB storage provider, its Gson mapper, and a background job server with as many workers as
     * callers, polling at the shortest interval JobRunr allows.
     */
    static final class JobRunr implements Side {

        /** JobRunr refuses a poll interval under 5 seconds. */
        static final Duration POLL_INTERVAL = Duration.ofSeconds(5);

        private final MongoClient client;
        private final MongoDatabase db;
        private final Windowed windowed = new Windowed();
        private final JsonMapper mapper = new GsonJsonMapper();
        private MongoDBStorageProvider storage;
        private JobScheduler scheduler;
        /** Started once per number of workers and left running, as an application runs it. */
        private BackgroundJobServer server;
        private int workers;

        /**
         * @param uri the server through the proxy: JobRunr gets a client of its own, with the UUID representation it
         *            requires ({@code standard})
         */
        JobRunr(String uri) {
            this.client = MongoClients.create(uri + "&uuidRepresentation=standard");
            this.db = client.getDatabase("peers_jobrunr");
        }

        @Override
        public String name() {
            return "JobRunr " + Peers.version("jobrunr");
        }

        @Override
        public String database() {
            return db.getName();
        }

        @Override
        public void prepare(int documents) {
            db.drop();
            try {
                storage = new MongoDBStorageProvider(client, db.getName(),
                        StorageProviderUtils.DatabaseOptions.CREATE);
                storage.setJobMapper(new JobMapper(mapper));
                scheduler = new JobScheduler(storage);
                Instant later = Instant.now().plus(WAITING);
                scheduler.create(IntStream.range(0, documents).mapToObj(i -> JobBuilder.aJob().scheduleAt(later)
                        .withJobLambda(() -> Jobs.done(-1L))));
            } catch (RuntimeException e) {
                throw new SideUnavailableException("JobRunr failed to set up: " + Failures.describe(e), e);
            }
        }

        @Override
        public Phase run(int callers, Duration duration) {
            current = windowed;
            if (server == null || workers != callers) {
                stopServer();
                server = new BackgroundJobServer(storage, mapper, new JobActivator() {
                    @Override
                    public <T> T activateJob(Class<T> type) {
                        return null;   // static methods only
                    }
                }, BackgroundJobServerConfiguration.usingStandardBackgroundJobServerConfiguration()
                        .andWorkerCount(callers).andPollInterval(POLL_INTERVAL));
                server.start();
                workers = callers;
            }
            return windowed.run(callers, duration, token -> scheduler.enqueue(() -> Jobs.done(token)));
        }

        private void stopServer() {
            if (server != null) {
                server.stop();
                server = null;
            }
        }

        @Override
        public List<String> check() {
            return problems(windowed);
        }

        @Override
        public void close() {
            stopServer();
            client.close();
        }
    }
}
