package dev.consistencykit.benchmarks;

import java.util.ArrayList;
import java.util.List;

/** What failed, as a line: each cause's type and message, outermost first. */
final class Failures {

    private Failures() {
    }

    static String describe(Exception e) {
        List<String> causes = new ArrayList<>();
        Throwable t = e;
        while (t != null && causes.size() < 4) {
            String message = t.getMessage() == null ? "" : ": " + t.getMessage().strip().replaceAll("\\s+", " ");
            causes.add(t.getClass().getSimpleName() + message);
            t = t.getCause() == t ? null : t.getCause();
        }
        return String.join(" <- ", causes);
    }
}
