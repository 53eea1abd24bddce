package dev.consistencykit.examples.cli;

import java.util.Iterator;

import dev.consistencykit.examples.lab.Labs;

/** The pattern names, for picocli's help and completion. */
final class PatternNames implements Iterable<String> {

    @Override
    public Iterator<String> iterator() {
        return Labs.names().iterator();
    }
}
