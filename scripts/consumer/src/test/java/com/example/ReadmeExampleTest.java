package com.example;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.examples.samples.TwoPhaseSample;
import dev.consistencykit.testkit.junit5.MongoTestExtension;

/** Runs the README's two-phase sample, compiled here from this project's main sources, on the embedded server. */
@ExtendWith(MongoTestExtension.class)
class ReadmeExampleTest {

    @Test
    void shouldRunTheReadmesTwoPhaseExample(MongoDatabase db) {
        TwoPhaseSample.seed(db);
        TwoPhaseSample.run(db);
    }
}
