package dev.consistencykit.examples.tour;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Each example of the tour runs to the end consistent, crashes on purpose, and is repaired by recovery. */
@ExtendWith(MongoTestExtension.class)
class TourExamplesTest {

    static Stream<TourExample> examples() {
        return Tour.EXAMPLES.stream();
    }

    @SuppressWarnings("try")   // the write log narrates while attached
    @ParameterizedTest(name = "{0}")
    @MethodSource("examples")
    void shouldStayConsistentThroughItsCrashAndRecovery(TourExample example, MongoTarget target, MongoDatabase db) {
        Narration narration = Narration.silent();

        try (WriteLog log = WriteLog.attach(target, db.getName(), narration)) {
            example.run(db, narration);
        }

        assertThat(narration.problems()).as(String.join("\n", narration.lines())).isEmpty();
        assertThat(narration.lines()).anyMatch(l -> l.contains("injected crash: CRASH_AFTER"));
        if (example instanceof NaiveTransferExample) {
            return;   // the opening act: one crash, nothing to recover with
        }
        assertThat(narration.lines()).filteredOn(l -> l.startsWith("     wrote ")).hasSizeGreaterThan(5);
        assertThat(narration.lines()).filteredOn(l -> l.startsWith("   a reader sees: ")).hasSizeGreaterThanOrEqualTo(3);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("examples")
    void shouldNameItsPatternAndUseCase(TourExample example) {
        assertThat(example.pattern()).isIn("naive", "sync-flag", "job-queue", "two-phase", "log-reconciliation", "versioning");
        assertThat(example.title()).isNotBlank();
    }
}
