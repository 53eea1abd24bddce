package dev.consistencykit.cli.lab;

import java.util.List;

import org.bson.Document;

/**
 * What {@code chaos <pattern>} did.
 *
 * @param pattern     the pattern
 * @param writeSites  write sites of the pattern's main operation
 * @param scenarios   crash-exploration scenarios run
 * @param interleavings schedules the interleaving explorer ran (another actor at each call of an operation)
 * @param seeds       chaos seeds run
 * @param operations  operations run by the chaos workers
 * @param crashes     simulated process deaths during chaos
 * @param faults      faults injected during chaos
 * @param violations  invariant violations and unexpected failures, exploration and chaos together
 * @param details     the first violations, each replayable (scenario or seed)
 */
public record ChaosReport(String pattern, int writeSites, int scenarios, int interleavings, int seeds, long operations, long crashes,
                          long faults, int violations, List<String> details) {

    /** Copies the list. */
    public ChaosReport {
        details = List.copyOf(details);
    }

    /** The JSON object the CLI prints. */
    public Document json() {
        return new Document("pattern", pattern).append("writeSites", writeSites).append("scenarios", scenarios)
                .append("interleavings", interleavings).append("seeds", seeds).append("operations", operations).append("crashes", crashes)
                .append("faults", faults).append("violations", violations).append("details", details);
    }
}
