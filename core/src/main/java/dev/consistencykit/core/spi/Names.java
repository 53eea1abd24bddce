package dev.consistencykit.core.spi;

import dev.consistencykit.core.InvalidInputException;

/**
 * Names of collections, fields and dotted field paths: what a pattern accepts where a name reaches the server. Each
 * failure is an {@link InvalidInputException}, whether the name comes from a setting or from an operation, because it
 * would reach the server as part of a command.
 *
 * <p>Stateless and thread-safe.
 */
public final class Names {

    private Names() {
    }

    /** Whether {@code name} passes {@link #fieldName}: for names read back, which are input again. */
    public static boolean isFieldName(String name) {
        try {
            fieldName(null, "field", name);
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    /**
     * Whether {@code name} is a collection name the patterns use: a {@linkplain #isFieldName field name} (so no
     * {@code .}, which also keeps {@code system.} collections out).
     */
    public static boolean isCollectionName(String name) {
        return isFieldName(name);
    }

    /**
     * Checks one field name: not blank, not starting with {@code $}, no {@code .} and no NUL character.
     *
     * @return {@code name}
     * @throws InvalidInputException if it is not acceptable
     */
    public static String fieldName(String instanceName, String field, String name) {
        if (name == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        if (name.isBlank()) {
            throw new InvalidInputException(instanceName, field, field + " must not be blank, was " + Values.show(name));
        }
        if (name.startsWith("$")) {
            throw new InvalidInputException(instanceName, field, field + " must not start with '$', was " + Values.show(name));
        }
        if (name.indexOf('.') >= 0) {
            throw new InvalidInputException(instanceName, field, field + " must not contain '.', was " + Values.show(name));
        }
        if (name.indexOf('\0') >= 0) {
            throw new InvalidInputException(instanceName, field, field + " must not contain NUL, was " + Values.show(name));
        }
        return name;
    }

    /**
     * Checks a dotted field path ({@code author.name}): every segment must pass {@link #fieldName}.
     *
     * @return {@code path}
     * @throws InvalidInputException if it is not acceptable
     */
    public static String fieldPath(String instanceName, String field, String path) {
        if (path == null) {
            throw new InvalidInputException(instanceName, field, field + " must not be null");
        }
        for (String segment : path.split("\\.", -1)) {
            if (segment.isEmpty() || segment.startsWith("$") || segment.indexOf('\0') >= 0 || segment.isBlank()) {
                throw new InvalidInputException(instanceName, field, field
                        + " must be a dotted path of plain field names, was " + Values.show(path));
            }
        }
        return path;
    }
}
