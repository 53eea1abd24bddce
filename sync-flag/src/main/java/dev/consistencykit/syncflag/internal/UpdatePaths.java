package dev.consistencykit.syncflag.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The field paths an update touches, read from its operators, and how they relate to the copied fields. Positional
 * segments ({@code $}, {@code $[]}, {@code $[e]}) match any segment, so an update whose effect cannot be told
 * statically counts as touching.
 */
final class UpdatePaths {

    /** A field path an update writes, and whether the operator removes it. */
    record Touched(String operator, String path, boolean removes) {
    }

    private UpdatePaths() {
    }

    static List<Touched> of(BsonDocument update) {
        List<Touched> touched = new ArrayList<>();
        for (Map.Entry<String, BsonValue> op : update.entrySet()) {
            String operator = op.getKey();
            for (Map.Entry<String, BsonValue> field : op.getValue().asDocument().entrySet()) {
                switch (operator) {
                    case "$unset" -> touched.add(new Touched(operator, field.getKey(), true));
                    case "$rename" -> {
                        touched.add(new Touched(operator, field.getKey(), true));
                        if (field.getValue().isString()) {
                            touched.add(new Touched(operator, field.getValue().asString().getValue(), false));
                        }
                    }
                    default -> touched.add(new Touched(operator, field.getKey(), false));
                }
            }
        }
        return touched;
    }

    /** Whether writing {@code path} may change the value at {@code field}: one is a prefix of the other. */
    static boolean overlaps(String path, String field) {
        String[] a = path.split("\\.", -1);
        String[] b = field.split("\\.", -1);
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            if (!a[i].equals(b[i]) && !a[i].startsWith("$") && !b[i].startsWith("$")) {
                return false;
            }
        }
        return true;
    }

    /** Whether writing {@code path} replaces or removes the whole of {@code field} (or an ancestor of it). */
    static boolean covers(String path, String field) {
        String[] a = path.split("\\.", -1);
        String[] b = field.split("\\.", -1);
        return a.length <= b.length && overlaps(path, field);
    }

    /** The first segment of a path. */
    static String top(String path) {
        int dot = path.indexOf('.');
        return dot < 0 ? path : path.substring(0, dot);
    }
}
