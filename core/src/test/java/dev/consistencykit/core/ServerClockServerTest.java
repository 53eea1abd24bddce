package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;

import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

@ExtendWith(ServerDatabases.class)
class ServerClockServerTest {

    private static Instant serverTime(MongoDatabase db) {
        return ((Date) db.runCommand(new Document("isMaster", 1)).get("localTime")).toInstant();
    }

    @Test
    void shouldEstimateServerTimeWhenLocalClockIsSkewed(MongoDatabase db) {
        ServerClock ahead = ServerClock.of(db, Clock.offset(Clock.systemUTC(), Duration.ofHours(3)));
        ServerClock behind = ServerClock.of(db, Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-47)));

        Instant server = serverTime(db);

        assertThat(Duration.between(server, ahead.now()).abs()).isLessThan(Duration.ofSeconds(2));
        assertThat(Duration.between(server, behind.now()).abs()).isLessThan(Duration.ofSeconds(2));
        assertThat(ahead.offset()).isBetween(Duration.ofHours(-3).minusSeconds(2), Duration.ofHours(-3).plusSeconds(2));
    }

    @Test
    void shouldPutCutoffInThePastByTheGivenAge(MongoDatabase db) {
        ServerClock clock = ServerClock.of(db);

        Date cutoff = clock.cutoff(Duration.ofMinutes(10));

        Duration age = Duration.between(cutoff.toInstant(), serverTime(db));
        assertThat(age).isBetween(Duration.ofMinutes(10).minusSeconds(2), Duration.ofMinutes(10).plusSeconds(2));
        assertThat(clock.ageOf(serverTime(db).plusSeconds(60))).isEqualTo(Duration.ZERO);
    }
}
