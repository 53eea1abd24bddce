package dev.consistencykit.cli;

import java.util.Iterator;

import dev.consistencykit.cli.lab.Labs;
import dev.consistencykit.cli.lab.PatternLab;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** The pattern names, for picocli's help and completion. */
final class PatternNames implements Iterable<String> {

    @Override
    public Iterator<String> iterator() {
        return Labs.names().iterator();
    }

    /** The lab of {@code pattern}, or a usage error naming the known patterns. */
    static PatternLab lab(CommandSpec spec, String pattern) {
        return Labs.find(pattern).orElseThrow(() -> new ParameterException(spec.commandLine(),
                "unknown pattern '" + pattern + "'; known: " + Labs.names()));
    }
}
