package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;

import dev.consistencykit.core.spi.Checks;

/**
 * A configuration is fields, getters and a builder's setters: equality, hash code, text and copies cover every field
 * without a line per setting, and {@code build()} hands out a checked copy.
 */
class StrategyConfigTest {

    /** A pattern's configuration as small as one can be: one setting of its own, one rule combining it. */
    static final class ExampleConfig extends StrategyConfig {
        int size = 3;

        ExampleConfig() {
            super("example");
        }

        int size() {
            return size;
        }

        @Override
        public Duration staleAfter() {
            return Duration.ofMinutes(1);
        }

        @Override
        protected void checkCombination() {
            if (size > 10 && operationTimeout().compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalStateException("a size above 10 needs a second");
            }
        }
    }

    static final class ExampleBuilder extends StrategyBuilder<ExampleBuilder, ExampleConfig> {
        ExampleBuilder(MongoClient client) {
            super(client.getDatabase("unused"), "example", ExampleConfig::new);
        }

        ExampleBuilder size(int value) {
            config.size = Checks.atLeast("size", value, 1);
            return this;
        }

        ExampleConfig build() {
            return builtConfig();
        }
    }

    @Test
    void shouldCompareDescribeAndCopyEverySetting() {
        try (MongoClient client = MongoClients.create("mongodb://localhost:1")) {   // never connects
            ExampleConfig a = new ExampleBuilder(client).size(5).name("a").build();
            ExampleConfig same = new ExampleBuilder(client).from(a).build();
            ExampleConfig other = new ExampleBuilder(client).from(a).operationTimeout(Duration.ofSeconds(9)).build();

            assertThat(same).isEqualTo(a).hasSameHashCodeAs(a).isNotSameAs(a);
            assertThat(other).isNotEqualTo(a);
            assertThat(a.toString()).startsWith("ExampleConfig[size=5, name=a,").contains("operationTimeout=PT30S");
        }
    }

    @Test
    void shouldHandOutACopyCheckedAsAWhole() {
        try (MongoClient client = MongoClients.create("mongodb://localhost:1")) {
            ExampleBuilder builder = new ExampleBuilder(client).size(5);
            ExampleConfig built = builder.build();
            builder.size(7);

            assertThat(built.size()).isEqualTo(5);
            assertThatThrownBy(() -> builder.size(11).operationTimeout(Duration.ofMillis(10)).build())
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> builder.size(0)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
