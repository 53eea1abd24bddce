package dev.consistencykit.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.bson.Document;

/** Runs the CLI in this JVM and captures what it prints. */
final class CliTestSupport {

    record Run(int exitCode, String out, String err) {

        List<String> lines() {
            return out.lines().toList();
        }

        Document lastLineJson() {
            List<String> lines = lines();
            return Document.parse(lines.get(lines.size() - 1));
        }
    }

    private CliTestSupport() {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = ConsistencyKitCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }
}
