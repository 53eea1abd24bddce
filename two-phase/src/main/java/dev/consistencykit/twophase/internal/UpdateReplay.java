package dev.consistencykit.twophase.internal;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

import org.bson.BsonArray;
import org.bson.BsonDecimal128;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.types.Decimal128;

/**
 * Applies a stored participant update (the {@code {op, path, value}} list {@link SpecCodec} writes) to a copy of a
 * document in memory, as the server would, so that a reader can see a document as it will be once a transaction
 * in flight on it is settled, either way. Covers what the server's result is fully determined by: {@code $set},
 * {@code $unset}, {@code $inc}, {@code $mul}, {@code $min}, {@code $max} on numbers, {@code $push},
 * {@code $addToSet}, {@code $pull} of a plain value, on paths through embedded documents. Anything else
 * ({@code $currentDate}, whose value only the server knows; a {@code $pull} condition; a path through an array;
 * arithmetic on a non-number) is reported as not replayable, and the reader answers that it could not resolve the
 * transaction instead of guessing.
 */
final class UpdateReplay {

    private UpdateReplay() {
    }

    /**
     * Applies {@code ops} to {@code document} in place.
     *
     * @return empty when done; otherwise why the update cannot be replayed (the document is then partly changed:
     *         pass a copy)
     */
    static Optional<String> apply(BsonDocument document, List<BsonValue> ops) {
        for (BsonValue o : ops) {
            if (!o.isDocument() || !o.asDocument().isString("op") || !o.asDocument().isString("path")) {
                return Optional.of("a stored update is malformed");
            }
            String op = o.asDocument().getString("op").getValue();
            String path = o.asDocument().getString("path").getValue();
            BsonValue value = o.asDocument().get("value");
            String[] keys = path.split("\\.", -1);
            BsonDocument parent = parent(document, keys, !op.equals("unset"));
            if (parent == null) {
                if (op.equals("unset")) {
                    continue;
                }
                return Optional.of("the path " + path + " does not lead through documents");
            }
            String last = keys[keys.length - 1];
            BsonValue current = parent.get(last);
            Optional<String> refused = switch (op) {
                case "set" -> put(parent, last, value);
                case "unset" -> {
                    parent.remove(last);
                    yield Optional.empty();
                }
                case "inc", "mul" -> arithmetic(parent, last, current, value, op.equals("inc"));
                case "min", "max" -> bound(parent, last, current, value, op.equals("min"));
                case "push", "addToSet", "pull" -> array(parent, last, current, value, op);
                default -> Optional.of("$" + op + " has a value only the server knows");
            };
            if (refused.isPresent()) {
                return Optional.of("$" + op + " of " + path + ": " + refused.get());
            }
        }
        return Optional.empty();
    }

    private static Optional<String> put(BsonDocument parent, String key, BsonValue value) {
        parent.put(key, value);
        return Optional.empty();
    }

    /** The document holding the last key of the path, creating missing ones when asked; null through a non-document. */
    private static BsonDocument parent(BsonDocument document, String[] keys, boolean create) {
        BsonDocument at = document;
        for (int i = 0; i < keys.length - 1; i++) {
            BsonValue next = at.get(keys[i]);
            if (next == null && create) {
                next = new BsonDocument();
                at.put(keys[i], next);
            }
            if (next == null || !next.isDocument()) {
                return null;
            }
            at = next.asDocument();
        }
        return at;
    }

    private static Optional<String> arithmetic(BsonDocument parent, String key, BsonValue current, BsonValue operand,
                                               boolean add) {
        if (operand == null || (!operand.isNumber() && !operand.isDecimal128())) {
            return Optional.of("the operand is not a number");
        }
        if (operand.isDecimal128() && !comparable(operand)) {
            return Optional.of("the operand is not a finite decimal");
        }
        if (current == null) {
            // a missing field: $inc sets the operand, $mul sets a zero of the operand's type
            parent.put(key, add ? operand : multiply(zeroLike(operand), operand));
            return Optional.empty();
        }
        if (!current.isNumber() && !current.isDecimal128()) {
            return Optional.of("the field holds a " + current.getBsonType() + ", not a number");
        }
        if ((current.isDecimal128() || operand.isDecimal128()) && !(comparable(current) && comparable(operand))) {
            return Optional.of("decimal arithmetic on a value that is not a finite number");
        }
        BsonValue result = add ? add(current, operand) : multiply(current, operand);
        if (result == null) {
            return Optional.of("the result passes the range of a 64-bit integer");
        }
        parent.put(key, result);
        return Optional.empty();
    }

    private static BsonValue zeroLike(BsonValue v) {
        return v.isDecimal128() ? new BsonDecimal128(Decimal128.POSITIVE_ZERO) : v.isDouble() ? new BsonDouble(0)
                : v.isInt64() ? new BsonInt64(0) : new BsonInt32(0);
    }

    /** The server's numeric promotion: decimal over double over long over int; an int that overflows becomes long. */
    private static BsonValue add(BsonValue a, BsonValue b) {
        if (a.isDecimal128() || b.isDecimal128()) {
            return new BsonDecimal128(new Decimal128(decimal(a).add(decimal(b))));
        }
        if (a.isDouble() || b.isDouble()) {
            return new BsonDouble(a.asNumber().doubleValue() + b.asNumber().doubleValue());
        }
        long x = a.asNumber().longValue();
        long y = b.asNumber().longValue();
        long sum = x + y;
        if (((x ^ sum) & (y ^ sum)) < 0) {
            return null;
        }
        return a.isInt32() && b.isInt32() && sum == (int) sum ? new BsonInt32((int) sum) : new BsonInt64(sum);
    }

    private static BsonValue multiply(BsonValue a, BsonValue b) {
        if (a.isDecimal128() || b.isDecimal128()) {
            return new BsonDecimal128(new Decimal128(decimal(a).multiply(decimal(b))));
        }
        if (a.isDouble() || b.isDouble()) {
            return new BsonDouble(a.asNumber().doubleValue() * b.asNumber().doubleValue());
        }
        long x = a.asNumber().longValue();
        long y = b.asNumber().longValue();
        long product;
        try {
            product = Math.multiplyExact(x, y);
        } catch (ArithmeticException e) {
            return null;
        }
        return a.isInt32() && b.isInt32() && product == (int) product ? new BsonInt32((int) product)
                : new BsonInt64(product);
    }

    private static BigDecimal decimal(BsonValue v) {
        return v.isDecimal128() ? v.asDecimal128().getValue().bigDecimalValue()
                : v.isDouble() ? BigDecimal.valueOf(v.asDouble().getValue()) : BigDecimal.valueOf(v.asNumber()
                .longValue());
    }

    private static Optional<String> bound(BsonDocument parent, String key, BsonValue current, BsonValue operand,
                                          boolean min) {
        if (current == null) {
            parent.put(key, operand);
            return Optional.empty();
        }
        boolean numbers = comparable(current) && comparable(operand);
        if (!numbers) {
            return Optional.of("only finite numbers are compared in memory");
        }
        int c = decimal(operand).compareTo(decimal(current));
        if (min ? c < 0 : c > 0) {
            parent.put(key, operand);
        }
        return Optional.empty();
    }

    private static Optional<String> array(BsonDocument parent, String key, BsonValue current, BsonValue value,
                                          String op) {
        if (current != null && !current.isArray()) {
            return Optional.of("the field holds a " + current.getBsonType() + ", not an array");
        }
        BsonArray items = current == null ? new BsonArray() : current.asArray().clone();
        switch (op) {
            case "push" -> items.add(value);
            case "addToSet" -> {
                if (items.stream().noneMatch(item -> same(item, value))) {
                    items.add(value);
                }
            }
            default -> {
                if (value.isDocument() || value.isArray()) {
                    return Optional.of("a $pull of a document or array matches as a query, on the server only");
                }
                items.removeIf(item -> same(item, value));
                if (current == null) {
                    return Optional.empty();
                }
            }
        }
        parent.put(key, items);
        return Optional.empty();
    }

    /** Equality as the server compares array elements: numbers by value whatever their type. */
    private static boolean same(BsonValue a, BsonValue b) {
        boolean numbers = comparable(a) && comparable(b);
        return numbers ? decimal(a).compareTo(decimal(b)) == 0 : a.equals(b);
    }

    /** A number {@link #decimal} can hold exactly: not NaN, not an infinity. */
    private static boolean comparable(BsonValue v) {
        if (v.isDouble()) {
            return Double.isFinite(v.asDouble().getValue());
        }
        return v.isNumber() || (v.isDecimal128() && v.asDecimal128().getValue().isFinite());
    }
}
