package dev.consistencykit.cli;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.mongodb.client.MongoDatabase;

import dev.consistencykit.core.spi.Values;
import dev.consistencykit.dashboard.DashboardInstance;
import dev.consistencykit.testkit.MongoTarget;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** The options {@code inspect} and {@code recover} share: which database, and how stale an operation must be. */
final class OperatorOptions {

    private static final Pattern VALID_DATABASE = Pattern.compile("[^\\s./\\\\\"$\\x00]{1,63}");

    @Option(names = "--database", paramLabel = "NAME",
            description = "the database to look in (default: the one named in the URI)")
    String database;

    @Option(names = "--stale-after", paramLabel = "DURATION", defaultValue = "60s",
            converter = DurationConverter.class,
            description = "only operations with no progress for this long, like 90s, 5m or 0 for all"
                    + " (default: ${DEFAULT-VALUE})")
    Duration staleAfter;

    /** The database to use on {@code target}. */
    String databaseName(MongoTarget target) {
        if (database != null && !database.isBlank()) {
            if (!VALID_DATABASE.matcher(database).matches()) {
                throw new IllegalArgumentException("--database must be a MongoDB database name (no space, '.', '$',"
                        + " '/', '\\', '\"' or NUL, at most 63 bytes), was " + Values.show(database));
            }
            return database;
        }
        String fromUri = target.connectionString().getDatabase();
        if (fromUri == null) {
            throw new IllegalArgumentException("name the database with --database, or in the URI"
                    + " (mongodb://host/mydb)");
        }
        return fromUri;
    }

    /** The database an operator command looks in, whether it exists, and the instances found there. */
    record Scope(String name, boolean exists, MongoDatabase db, List<DashboardInstance> present) {

        /** {@code [two-phase 'payments', …]}. */
        List<String> instances() {
            return present.stream().map(p -> p.pattern() + " '" + p.strategy().name() + "'").toList();
        }
    }

    /**
     * Opens the scope on {@code target}.
     *
     * @throws IllegalArgumentException (a usage error, exit 2) if the database does not exist there: most likely a
     *                                  misspelled name, and no answer about it would be true
     */
    Scope scope(MongoTarget target, java.io.PrintWriter out) {
        String name = databaseName(target);
        List<String> names = target.client().listDatabaseNames().into(new java.util.ArrayList<>());
        if (!names.contains(name)) {
            throw new IllegalArgumentException("database " + name + " does not exist on " + target.description()
                    + " (check --database or the URI); databases there: " + names.stream().sorted().limit(20)
                    .toList());
        }
        MongoDatabase db = target.client().getDatabase(name);
        return new Scope(name, true, db, DashboardInstance.registered(db));
    }

    /** {@code d} as the options are written: {@code 0s}, {@code 90s}, {@code 5m}, {@code 2h}, {@code 500ms}. */
    static String show(Duration d) {
        long ms = d.toMillis();
        if (ms % 1_000 != 0) {
            return ms + "ms";
        }
        long s = ms / 1_000;
        return s != 0 && s % 3_600 == 0 ? s / 3_600 + "h" : s != 0 && s % 60 == 0 ? s / 60 + "m" : s + "s";
    }

    /** {@code 500ms}, {@code 90s}, {@code 5m}, {@code 2h}, {@code 0}, or ISO-8601 ({@code PT1M}). */
    static final class DurationConverter implements ITypeConverter<Duration> {

        private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h)?");

        @Override
        public Duration convert(String value) {
            Matcher m = SIMPLE.matcher(value.trim().toLowerCase(Locale.ROOT));
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                String unit = m.group(2) == null ? "s" : m.group(2);
                return switch (unit) {
                    case "ms" -> Duration.ofMillis(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofSeconds(n);
                };
            }
            try {
                Duration d = Duration.parse(value.trim().toUpperCase(Locale.ROOT));
                if (!d.isNegative()) {
                    return d;
                }
            } catch (java.time.format.DateTimeParseException e) {
                // reported below
            }
            throw new TypeConversionException("'" + value + "' is not a duration like 90s, 5m, 2h or 0");
        }
    }
}
