package dev.consistencykit.examples.cli;

import java.util.Optional;

import dev.consistencykit.testkit.EmbeddedMongo;
import dev.consistencykit.testkit.MongoTarget;

/** Opens the server a command runs against: {@code --uri}, else {@code MONGODB_URI}, else an embedded server. */
final class Target {

    private Target() {
    }

    static MongoTarget open(String uriOption) {
        Optional<String> uri = Optional.ofNullable(uriOption).filter(u -> !u.isBlank())
                .or(() -> Optional.ofNullable(System.getenv(MongoTarget.URI_ENVIRONMENT)).filter(u -> !u.isBlank()));
        return uri.map(Target::forUri).orElseGet(() -> MongoTarget.embedded(EmbeddedMongo.start()));
    }

    private static MongoTarget forUri(String uri) {
        try {
            return MongoTarget.forUri(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid MongoDB URI '" + MongoTarget.redact(uri) + "': "
                    + e.getMessage(), e);
        }
    }
}
