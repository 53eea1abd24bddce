package dev.consistencykit.syncflag;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.spi.Names;

/**
 * Where copies of a master's fields live: a collection, the field holding the master's id, the copied fields, and
 * optionally the array of subdocuments the copies sit in (a post's {@code comments}, each with its author's id and
 * name).
 *
 * <pre>{@code
 * SyncTarget.in("comments", "authorId").copy("name", "authorName");                      // one copy per document
 * SyncTarget.in("posts", "authorId").inArray("comments").copy("name", "authorName");    // copies in posts.comments[]
 * }</pre>
 *
 * <p>Every copy also carries a version ({@link #versionField()}, by default the id field's name followed by
 * {@code SyncVersion}, next to the id field): the master's {@code syncVersion} the copy was written from. Propagation
 * only writes copies whose version is lower, which is what stops a delayed writer from putting back an older value.
 *
 * <p>Immutable; the {@code copy}, {@code inArray} and {@code versionField} methods return new instances.
 *
 * @param collection   the target collection
 * @param idField      the field holding the master's {@code _id} (inside each array element for an array target)
 * @param arrayField   the array of subdocuments holding the copies, if any
 * @param copies       master field → target field, in declaration order; paths relative to the array element for an
 *                     array target
 * @param versionField the field holding each copy's version (relative to the array element for an array target)
 */
public record SyncTarget(String collection, String idField, Optional<String> arrayField, Map<String, String> copies,
                         String versionField) {

    /** Suffix of the default version field. */
    public static final String DEFAULT_VERSION_SUFFIX = "SyncVersion";

    /**
     * Validates and copies.
     *
     * @throws InvalidInputException for a field name or path that is blank, starts with {@code $} or has an empty
     *                               segment, or a version field that is also an id or copy field
     */
    public SyncTarget {
        Names.fieldName(null, "collection", collection);
        Names.fieldPath(null, "idField", idField);
        Objects.requireNonNull(arrayField, "arrayField");
        arrayField.ifPresent(a -> Names.fieldPath(null, "arrayField", a));
        Objects.requireNonNull(copies, "copies");
        Map<String, String> copied = new LinkedHashMap<>();
        copies.forEach((from, to) -> copied.put(Names.fieldPath(null, "copies (master field)", from),
                Names.fieldPath(null, "copies (target field)", to)));
        copies = java.util.Collections.unmodifiableMap(copied);
        Names.fieldPath(null, "versionField", versionField);
        for (String to : copies.values()) {
            if (overlaps(to, idField) || overlaps(to, versionField)) {
                throw new InvalidInputException(null, "copies", "target field '" + to + "' of " + collection
                        + " overlaps the id field '" + idField + "' or the version field '" + versionField + "'");
            }
        }
        if (overlaps(idField, versionField)) {
            throw new InvalidInputException(null, "versionField", "version field '" + versionField
                    + "' overlaps the id field '" + idField + "' of " + collection);
        }
    }

    /**
     * A target in {@code collection} whose documents hold the master's id in {@code idField}; add copies with
     * {@link #copy}.
     */
    public static SyncTarget in(String collection, String idField) {
        return new SyncTarget(collection, idField, Optional.empty(), Map.of(),
                Names.fieldPath(null, "idField", idField) + DEFAULT_VERSION_SUFFIX);
    }

    /** This target with the master's field {@code masterField} copied into {@code targetField}. */
    public SyncTarget copy(String masterField, String targetField) {
        Names.fieldPath(null, "copies (master field)", masterField);
        Names.fieldPath(null, "copies (target field)", targetField);
        if (copies.containsValue(targetField)) {
            throw new InvalidInputException(null, "copies", "target field '" + targetField + "' of " + collection
                    + " is already a copy");
        }
        Map<String, String> more = new LinkedHashMap<>(copies);
        if (more.putIfAbsent(masterField, targetField) != null) {
            throw new InvalidInputException(null, "copies", "master field '" + masterField + "' is already copied into "
                    + collection + "." + copies.get(masterField));
        }
        return new SyncTarget(collection, idField, arrayField, more, versionField);
    }

    /** This target with the copies inside the subdocuments of array {@code field}. */
    public SyncTarget inArray(String field) {
        return new SyncTarget(collection, idField, Optional.of(field), copies, versionField);
    }

    /** This target with each copy's version kept in {@code field}. */
    public SyncTarget versionField(String field) {
        return new SyncTarget(collection, idField, arrayField, copies, field);
    }

    /** The full path of a field relative to the copy: prefixed with the array for an array target. */
    public String path(String field) {
        return arrayField.map(a -> a + "." + field).orElse(field);
    }

    /** A short description for messages: {@code posts.comments[].authorId}. */
    @Override
    public String toString() {
        return collection + "." + arrayField.map(a -> a + "[].").orElse("") + idField + " " + copies;
    }

    static boolean overlaps(String a, String b) {
        return a.equals(b) || a.startsWith(b + ".") || b.startsWith(a + ".");
    }
}
