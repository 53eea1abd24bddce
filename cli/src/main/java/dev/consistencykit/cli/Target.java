package dev.consistencykit.cli;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.bson.Document;

import com.mongodb.ConnectionString;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoTimeoutException;

import dev.consistencykit.embedded.EmbeddedMongo;
import dev.consistencykit.testkit.MongoTarget;

/**
 * Opens the server a command runs against: {@code --uri}, else {@code MONGODB_URI}, else an embedded server. A server
 * given by URI must answer a {@code ping} within {@code --server-timeout}; otherwise the command ends at once with
 * {@link ServerUnreachableException} naming the host and the option, instead of every later call waiting its own
 * timeout.
 */
final class Target {

    private Target() {
    }

    static MongoTarget open(GlobalOptions cli) {
        Optional<String> uri = Optional.ofNullable(cli.uri()).filter(u -> !u.isBlank())
                .or(() -> Optional.ofNullable(System.getenv(MongoTarget.URI_ENVIRONMENT)).filter(u -> !u.isBlank()));
        if (uri.isEmpty()) {
            return MongoTarget.embedded(EmbeddedMongo.start());
        }
        MongoTarget target = forUri(uri.get(), cli.serverTimeout());
        try {
            target.client().getDatabase("admin").withTimeout(cli.serverTimeout().toMillis() + 1_000,
                    TimeUnit.MILLISECONDS).runCommand(new Document("ping", 1));
            return target;
        } catch (MongoSecurityException e) {
            target.close();
            throw new ServerUnreachableException("the MongoDB server at " + hosts(target.connectionString())
                    + " refused the credentials in the URI" + embeddedHint(target.connectionString()), e);
        } catch (MongoTimeoutException e) {
            target.close();
            throw new ServerUnreachableException("no MongoDB server answered at " + hosts(target.connectionString())
                    + " within " + OperatorOptions.show(cli.serverTimeout()) + " (--server-timeout): is it running,"
                    + " and is the URI right?", e);
        } catch (MongoException e) {
            target.close();
            throw new ServerUnreachableException("the MongoDB server at " + hosts(target.connectionString())
                    + " could not be used: " + e.getMessage(), e);
        }
    }

    /** The hosts of a connection string, never its credentials. */
    static String hosts(ConnectionString uri) {
        return String.join(",", uri.getHosts());
    }

    private static String embeddedHint(ConnectionString uri) {
        return uri.getHosts().stream().allMatch(h -> h.startsWith("127.0.0.1") || h.startsWith("localhost"))
                ? " (if this is 'consistency-kit serve': the embedded server has no authentication; connect without"
                + " a user and password)" : "";
    }

    private static MongoTarget forUri(String uri, Duration serverTimeout) {
        try {
            return MongoTarget.forUri(uri, serverTimeout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid MongoDB URI '" + MongoTarget.redact(uri) + "': "
                    + e.getMessage(), e);
        }
    }
}
