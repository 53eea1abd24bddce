package dev.consistencykit.examples.tour;

import java.util.ArrayList;
import java.util.List;

import org.bson.Document;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.testkit.MongoTarget;

/** Runs every pattern's example, each in a fresh database, narrating the writes each one sends. */
public final class Tour {

    /** The examples, in the order the tour runs them: the naive way first, then each pattern. */
    public static final List<TourExample> EXAMPLES = List.of(new NaiveTransferExample(), new UserRenameExample(),
            new FriendshipExample(), new BankTransferExample(), new PaymentsLedgerExample(), new CatalogueExample());

    private Tour() {
    }

    /**
     * Runs every example on {@code target}, each in a fresh database dropped afterwards.
     *
     * @return one entry per example: its pattern and the problems it found (none when it behaved)
     */
    public static List<Document> run(MongoTarget target, Narration narration) {
        return run(target, narration, EXAMPLES);
    }

    /** Runs {@code examples} on {@code target}, as {@link #run(MongoTarget, Narration)} runs them all. */
    @SuppressWarnings("try")   // the write log narrates while attached
    public static List<Document> run(MongoTarget target, Narration narration, List<TourExample> examples) {
        List<Document> results = new ArrayList<>();
        int number = 0;
        for (TourExample example : examples) {
            number++;
            MongoDatabase db = target.client().getDatabase(MongoTarget.freshDatabaseName("tour"));
            int before = narration.problems().size();
            narration.section((examples.size() > 1 ? number - 1 + ". " : "") + example.title() + "  ["
                    + example.pattern() + "]");
            try (WriteLog log = WriteLog.attach(target, db.getName(), narration)) {
                example.run(db, narration);
            } finally {
                db.drop();
            }
            List<String> problems = narration.problems().subList(before, narration.problems().size());
            boolean naive = example instanceof NaiveTransferExample;
            narration.outcome(example.pattern(), !problems.isEmpty() ? problems.size() + " problem(s)"
                    : naive ? "money lost by the crash, as expected" : "consistent after the crash and recovery",
                    problems.isEmpty());
            results.add(new Document("pattern", example.pattern()).append("problems", List.copyOf(problems)));
        }
        return results;
    }
}
