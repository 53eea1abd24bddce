package dev.consistencykit.jobqueue.internal;

/**
 * How a key's line is kept: its newest entries on the key's document, at most {@code chunk} of them, and its older ones
 * in chunks of {@code chunk} entries (documents of their own, numbered in the order they were made), at most
 * {@code maxChunks} of them, with at most {@code lastChunk} entries on the key's document once it holds them all. So a
 * join rewrites a document of at most {@code chunk} entries and moving the line on reads the head's chunk, whatever
 * the key's backlog, and a line never holds more than the queue's {@code maxKeyBacklog} entries.
 *
 * @param chunk     entries a chunk and the key's document hold
 * @param maxChunks chunks a line holds at most
 * @param lastChunk entries the key's document holds at most once the line holds {@code maxChunks} chunks
 */
record LineShape(int chunk, int maxChunks, int lastChunk) {

    /** Entries a chunk holds at most: about 7 kB of entries. */
    static final int MAX_CHUNK = 100;

    /**
     * The shape of a line that holds at most {@code most} entries: chunks of a quarter of it, at most
     * {@link #MAX_CHUNK} (a short line's chunks are small, so a test of a few jobs makes several).
     */
    static LineShape holding(int most) {
        if (most < 1) {
            throw new IllegalArgumentException("a line holds at least one entry: " + most);
        }
        int chunk = Math.min(MAX_CHUNK, Math.max(1, (most + 3) / 4));
        int maxChunks = (most + chunk - 1) / chunk - 1;
        return new LineShape(chunk, maxChunks, most - maxChunks * chunk);
    }
}
