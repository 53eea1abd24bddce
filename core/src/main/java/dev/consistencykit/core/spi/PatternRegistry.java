package dev.consistencykit.core.spi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.RetryPolicy;
import dev.consistencykit.core.spi.Calls;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.Values;

/**
 * Where each pattern instance records, from its {@code ensureIndexes()}, which collections and fields it keeps its
 * data in: one document per instance in {@value #COLLECTION} of the instance's database. Operators' tools
 * ({@code consistency-kit inspect} and {@code recover}) build every instance from it, under whatever collection names
 * the application chose, without the application's code. (The sync flag records its masters and targets in its own
 * registry, which holds more than collection names.)
 *
 * <p>What is read back is input: an entry whose names are not valid collection or field names is skipped and logged.
 */
public final class PatternRegistry {

    /** The registry collection. */
    public static final String COLLECTION = "consistencyKitRegistry";

    private static final Logger LOG = LoggerFactory.getLogger(PatternRegistry.class);

    private PatternRegistry() {
    }

    /**
     * One instance as it registered itself.
     *
     * @param pattern     the pattern's name ({@code two-phase}, {@code job-queue}, {@code log-reconciliation},
     *                    {@code versioning})
     * @param name        the instance's name
     * @param collections its collections by role ({@code transactions}, {@code jobs}…)
     * @param fields      field names it keeps in documents it does not own, by role (may be empty)
     */
    public record Registration(String pattern, String name, Map<String, String> collections,
                               Map<String, String> fields) {

        /** Copies the maps. */
        public Registration {
            Objects.requireNonNull(pattern, "pattern");
            Objects.requireNonNull(name, "name");
            collections = Map.copyOf(collections);
            fields = Map.copyOf(fields);
        }
    }

    /** Records (or replaces) {@code registration} in {@code database}. Idempotent; one write. */
    public static void register(MongoDatabase database, Registration registration) {
        Document entry = new Document("_id", registration.pattern() + "/" + registration.name())
                .append("pattern", registration.pattern()).append("name", registration.name())
                .append("collections", new Document(new LinkedHashMap<>(registration.collections())))
                .append("fields", new Document(new LinkedHashMap<>(registration.fields())));
        database.getCollection(COLLECTION).replaceOne(Filters.eq("_id", entry.get("_id")), entry,
                new ReplaceOptions().upsert(true));
    }

    /** Every valid registration in {@code database}, in {@code _id} order; at most 1,000. */
    public static List<Registration> registered(MongoDatabase database) {
        List<Registration> out = new ArrayList<>();
        for (Document entry : database.getCollection(COLLECTION).find().sort(new Document("_id", 1)).limit(1_000)) {
            Registration r = read(entry);
            if (r == null) {
                LOG.warn("skipping registry entry {} of {}: not one a pattern wrote", Values.show(entry.get("_id")),
                        COLLECTION);
            } else {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * A builder per instance of {@code pattern} registered in {@code database}, made by {@code builder} from its
     * registration: what each pattern's {@code registered(database)} returns. A registration without the collections
     * or fields named, or one the builder refuses, is skipped and logged. One read, bounded by the default operation
     * timeout unless the database has its own.
     *
     * @throws ConsistencyException (typed) if the registry cannot be read
     */
    public static <B> List<B> builders(MongoDatabase database, String pattern, Set<String> collections,
                                       Set<String> fields, Function<Registration, B> builder) {
        DriverFloor.require(pattern);   // before Calls, which needs the driver's newer types
        Calls calls = new Calls(pattern, RetryPolicy.DEFAULT, Calls.DEFAULT_OPERATION_TIMEOUT);
        MongoDatabase bounded = database.getTimeout(TimeUnit.MILLISECONDS) != null ? database
                : database.withTimeout(Calls.DEFAULT_OPERATION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        List<B> out = new ArrayList<>();
        for (Registration r : calls.idempotent("list registered instances", () -> registered(bounded))) {
            if (!r.pattern().equals(pattern)) {
                continue;
            }
            if (!r.collections().keySet().containsAll(collections) || !r.fields().keySet().containsAll(fields)) {
                LOG.warn("skipping registered {} '{}': it names no {} or no {}", pattern, Values.show(r.name()),
                        collections, fields);
                continue;
            }
            try {
                out.add(builder.apply(r));
            } catch (ConsistencyException | IllegalArgumentException e) {
                LOG.warn("skipping registered {} '{}': {}", pattern, Values.show(r.name()), e.getMessage());
            }
        }
        return out;
    }

    private static Registration read(Document entry) {
        if (!(entry.get("pattern") instanceof String pattern) || !(entry.get("name") instanceof String name)
                || name.isBlank() || !(entry.get("collections") instanceof Document collections)) {
            return null;
        }
        Map<String, String> c = names(collections, true);
        Map<String, String> f = entry.get("fields") instanceof Document fields ? names(fields, false) : Map.of();
        return c == null || f == null ? null : new Registration(pattern, name, c, f);
    }

    private static Map<String, String> names(Document values, boolean collections) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (!(e.getValue() instanceof String value) || !(collections ? Names.isCollectionName(value)
                    : Names.isFieldName(value))) {
                return null;
            }
            out.put(e.getKey(), value);
        }
        return out;
    }
}
