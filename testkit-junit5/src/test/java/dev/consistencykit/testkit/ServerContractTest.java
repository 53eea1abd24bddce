package dev.consistencykit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoClient;

import dev.consistencykit.testkit.contract.CheckResult;
import dev.consistencykit.testkit.contract.ContractCheck;
import dev.consistencykit.testkit.contract.ServerContract;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

@ExtendWith(MongoTestExtension.class)
class ServerContractTest {

    @Test
    void shouldPassEveryCheckWhenRunAgainstTargetServer(MongoClient client) {
        List<CheckResult> results = ServerContract.runAll(client);

        assertThat(results).hasSizeGreaterThanOrEqualTo(12);
        assertThat(results).extracting(CheckResult::name).contains("single-document-read-atomicity");
        assertThat(results).allSatisfy(r -> assertThat(r.passed()).as(r.toString()).isTrue());
    }

    /**
     * The one check the distributed engine's stage runs (scripts/test-distributed-engine), on a collection sharded on
     * {@code _id} there: the library's delete of one document is not lost to an update racing it.
     */
    @Test
    void shouldDeleteADocumentAnUpdateRaces(MongoClient client) {
        ContractCheck check = ServerContract.checks().stream().filter(c -> c.name().equals("delete-racing-an-update"))
                .findFirst().orElseThrow();

        CheckResult result = ServerContract.run(client, check);

        assertThat(result.passed()).as(result.toString()).isTrue();
    }

    @Test
    void shouldHaveUniqueNamesAndDescriptions() {
        List<ContractCheck> checks = ServerContract.checks();

        assertThat(checks).extracting(ContractCheck::name).doesNotHaveDuplicates()
                .allSatisfy(n -> assertThat(n).matches("[a-z0-9-]+"));
        assertThat(checks).extracting(ContractCheck::description).allSatisfy(d -> assertThat(d).isNotBlank());
    }

    @Test
    void shouldReportFailureWithWhatWasSeenWhenBehaviourDoesNotHold(MongoClient client) {
        ContractCheck broken = new ContractCheck("always-fails", "a check that sees a violation",
                db -> {
                    throw new dev.consistencykit.testkit.contract.ContractViolation("saw 3 instead of 4");
                });

        CheckResult result = ServerContract.run(client, broken);

        assertThat(result.passed()).isFalse();
        assertThat(result.detail()).isEqualTo("saw 3 instead of 4");
        assertThat(result.toString()).startsWith("FAIL always-fails");
    }
}
