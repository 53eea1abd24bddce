package dev.consistencykit.cli.lab;

import java.util.List;
import java.util.Optional;

/** The patterns the CLI can run chaos and benchmarks for. */
public final class Labs {

    private static final List<PatternLab> LABS = List.of(new SyncFlagLab(), new JobQueueLab(), new TwoPhaseLab(),
            new LedgerLab(), new VersioningLab());

    private Labs() {
    }

    /** Every lab. */
    public static List<PatternLab> all() {
        return LABS;
    }

    /** The lab of {@code pattern}, if there is one. */
    public static Optional<PatternLab> find(String pattern) {
        return LABS.stream().filter(l -> l.pattern().equals(pattern)).findFirst();
    }

    /** The patterns' names. */
    public static List<String> names() {
        return LABS.stream().map(PatternLab::pattern).toList();
    }
}
