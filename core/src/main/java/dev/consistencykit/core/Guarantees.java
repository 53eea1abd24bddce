package dev.consistencykit.core;

import java.util.Objects;

/**
 * What a pattern promises, in words a comparison table can print.
 *
 * @param atomicity     whether a change applies all-or-nothing, and when that becomes true
 * @param readerView    what a concurrent reader of the affected documents may observe mid-change
 * @param ordering      what order changes are applied or seen in
 * @param recovery      how an interrupted change is finished or undone
 */
public record Guarantees(String atomicity, String readerView, String ordering, String recovery) {

    /** Validates the components. */
    public Guarantees {
        Objects.requireNonNull(atomicity, "atomicity");
        Objects.requireNonNull(readerView, "readerView");
        Objects.requireNonNull(ordering, "ordering");
        Objects.requireNonNull(recovery, "recovery");
    }
}
