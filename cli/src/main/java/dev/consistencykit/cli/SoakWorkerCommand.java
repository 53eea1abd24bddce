package dev.consistencykit.cli;

import java.util.concurrent.Callable;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.cli.lab.Soak;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code soak-worker}: one worker process of the kill -9 soak; runs until it is killed. */
@Command(name = "soak-worker", hidden = true, description = "One worker of the soak: runs until killed.")
final class SoakWorkerCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Option(names = "--database", required = true, description = "the soak's database")
    String database;

    @Option(names = "--pattern", required = true, description = "the workload: ${COMPLETION-CANDIDATES}")
    String pattern;

    @Option(names = "--seed", defaultValue = "1", description = "the worker's seed")
    long seed;

    @Option(names = "--parent-pid", paramLabel = "PID", hidden = true,
            description = "end when process PID (the soak that started this one) is gone")
    Long parentPid;

    @Override
    public Integer call() {
        if (parentPid != null) {
            ParentWatch.start(parentPid);
        }
        // the URI comes in the environment, not on the command line, where any user of the machine could read it
        String uri = parent.uri() != null ? parent.uri() : System.getenv(MongoTarget.URI_ENVIRONMENT);
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("soak-worker needs --uri or " + MongoTarget.URI_ENVIRONMENT);
        }
        try (MongoClient client = MongoClients.create(uri)) {
            Soak.work(client.getDatabase(database), pattern, seed);
        }
        return 0;
    }
}
