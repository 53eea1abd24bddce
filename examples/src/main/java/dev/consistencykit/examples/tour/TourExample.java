package dev.consistencykit.examples.tour;

import com.mongodb.client.MongoDatabase;

/** One pattern on its natural use case, narrated: a normal run, then a crash on purpose and recovery. */
public interface TourExample {

    /** The pattern's CLI name ({@code sync-flag}…). */
    String pattern();

    /** The use case, for the heading. */
    String title();

    /**
     * Runs the example on {@code db} (a fresh database), narrating into {@code narration}; anything inconsistent it
     * finds on data read back is reported as a {@link Narration#problem}.
     */
    void run(MongoDatabase db, Narration narration);
}
