package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import org.bson.Document;

import dev.consistencykit.testkit.MongoTarget;
import dev.consistencykit.testkit.contract.CheckResult;
import dev.consistencykit.testkit.contract.ServerContract;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code verify-server}: the server-contract checks against the target server. Exit code 1 if any fails. */
@Command(name = "verify-server", mixinStandardHelpOptions = true,
        description = "Check that the server behaves as the patterns rely on (PASS/FAIL per behaviour).")
final class VerifyServerCommand implements Callable<Integer> {

    @ParentCommand
    GlobalOptions parent;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (MongoTarget target = Target.open(parent)) {
            if (!parent.json()) {
                out.println("Checking " + target.description() + " against " + ServerContract.checks().size()
                        + " behaviours the patterns rely on...");
                out.flush();
            }
            List<CheckResult> results = ServerContract.runAll(target.client(), r -> {
                if (!parent.json()) {
                    out.printf("%s %-42s %6.2f s  %s%n", r.verdict(), r.name(),
                            r.elapsed().toMillis() / 1000.0, r.detail());
                    out.flush();
                }
            });
            long failed = results.stream().filter(r -> !r.passed()).count();
            if (parent.json()) {
                List<Document> items = results.stream().map(r -> new Document("name", r.name())
                        .append("passed", r.passed()).append("skipped", r.skipped()).append("detail", r.detail()))
                        .toList();
                out.println(Json.line(new Document("server", target.description())
                        .append("checks", results.size()).append("failed", (int) failed).append("results", items)));
            } else {
                long skipped = results.stream().filter(CheckResult::skipped).count();
                out.println(results.size() + " checks, " + failed + " failed" + (skipped == 0 ? ""
                        : ", " + skipped + " not run on this server"));
            }
            return failed == 0 ? 0 : 1;
        }
    }
}
