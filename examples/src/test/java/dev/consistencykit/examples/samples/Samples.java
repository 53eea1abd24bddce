package dev.consistencykit.examples.samples;

/** What the samples share: a check that fails the sample's test with a message. */
final class Samples {

    private Samples() {
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("sample check failed: " + what);
        }
    }
}
