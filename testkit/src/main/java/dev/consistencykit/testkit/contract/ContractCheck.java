package dev.consistencykit.testkit.contract;

import java.util.Objects;

import com.mongodb.client.MongoDatabase;

/**
 * One behaviour of the server the patterns rely on.
 *
 * @param name        a stable, kebab-case name
 * @param description what the patterns need from the server
 * @param body        the check: returns what it saw, or throws {@link ContractViolation} with what it saw instead
 */
public record ContractCheck(String name, String description, Body body) {

    /** The check itself, run on a scratch database of its own. */
    @FunctionalInterface
    public interface Body {
        /**
         * Runs the check.
         *
         * @return a short description of what was seen when the behaviour held
         * @throws ContractViolation when it did not
         */
        String run(MongoDatabase scratch);
    }

    /** Validates the components. */
    public ContractCheck {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(body, "body");
    }
}
