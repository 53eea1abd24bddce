package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** A target given a server timeout hands it to its client; credentials never survive redaction. */
class MongoTargetTest {

    @Test
    void shouldGiveTheClientTheServerTimeout() {
        try (MongoTarget target = MongoTarget.forUri("mongodb://127.0.0.1:1/shop", Duration.ofMillis(300))) {
            assertThat(target.client().getClusterDescription().getClusterSettings()
                    .getServerSelectionTimeout(TimeUnit.MILLISECONDS)).isEqualTo(300);
        }
        try (MongoTarget target = MongoTarget.forUri("mongodb://127.0.0.1:1/shop")) {
            assertThat(target.client().getClusterDescription().getClusterSettings()
                    .getServerSelectionTimeout(TimeUnit.MILLISECONDS)).as("the driver's default").isEqualTo(30_000);
        }
        assertThatThrownBy(() -> MongoTarget.forUri("mongodb://127.0.0.1:1", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRedactEveryConnectionStringInAText() {
        assertThat(MongoTarget.redactAll("tried mongodb://bob:p/w@db.example:27017/x and mongodb+srv://a:b@c.example"))
                .isEqualTo("tried mongodb://db.example:27017/x and mongodb+srv://c.example");
    }
}
