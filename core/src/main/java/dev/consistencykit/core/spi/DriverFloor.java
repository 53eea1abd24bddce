package dev.consistencykit.core.spi;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.consistencykit.core.UnsafeConfigurationException;
import dev.consistencykit.core.spi.Checks;

/**
 * The lowest MongoDB Java driver the library works with, checked when an entry type is built.
 *
 * <p>The library bounds every call with the driver's client-side operation timeout and types its
 * {@code MongoOperationTimeoutException}, both added in driver 5.2. On an older driver (Spring Boot 3.2 manages 4.11,
 * 3.3 manages 5.0) a builder would otherwise fail deep inside with {@code NoClassDefFoundError}; instead the first
 * builder created throws one line naming the version found and the version needed. The check runs once per class
 * loader.
 *
 * <p>Thread-safe.
 */
public final class DriverFloor {

    /** The lowest {@code org.mongodb:mongodb-driver-sync} version supported. */
    public static final String MINIMUM = "5.2.0";

    /** A class the library needs that the driver gained in {@link #MINIMUM}. */
    static final String MARKER_CLASS = "com.mongodb.MongoOperationTimeoutException";

    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)(?:\\.(\\d+))?.*");

    private static volatile boolean checked;

    private DriverFloor() {
    }

    /**
     * The version of the driver on the class path, as the driver reports it, or {@code "unknown"}.
     */
    public static String found() {
        try {
            Object v = Class.forName("com.mongodb.internal.build.MongoDriverVersion").getField("VERSION").get(null);
            if (v instanceof String s && !s.isBlank()) {
                return s;
            }
        } catch (ReflectiveOperationException | LinkageError e) {
            // fall back to the jar's manifest
        }
        Package p = com.mongodb.MongoException.class.getPackage();
        String implementation = p == null ? null : p.getImplementationVersion();
        return implementation == null ? "unknown" : implementation;
    }

    /**
     * Checks the driver on the class path, once.
     *
     * @param instanceName the instance being built, for the message
     * @throws UnsafeConfigurationException if the driver is older than {@link #MINIMUM}
     */
    public static void require(String instanceName) {
        if (checked) {
            return;
        }
        String found = found();
        boolean present;
        try {
            Class.forName(MARKER_CLASS, false, DriverFloor.class.getClassLoader());
            present = true;
        } catch (ClassNotFoundException | LinkageError e) {
            present = false;
        }
        String problem = problem(found, present);
        if (problem != null) {
            throw new UnsafeConfigurationException(instanceName, problem);
        }
        checked = true;
    }

    /** Why {@code found} cannot be used, or {@code null} when it can. */
    static String problem(String found, boolean markerPresent) {
        if (markerPresent && (!isVersion(found) || compare(found, MINIMUM) >= 0)) {
            return null;
        }
        return "consistency-kit needs org.mongodb:mongodb-driver-sync " + MINIMUM + " or later; the class path holds "
                + found + ". Align the driver version (import consistency-kit-bom's version of it, or in Spring Boot"
                + " set the property mongodb.version to " + MINIMUM + " or later)";
    }

    static boolean isVersion(String version) {
        return VERSION.matcher(version).matches();
    }

    /** Compares two versions by major, minor and patch numbers. */
    static int compare(String a, String b) {
        Matcher x = VERSION.matcher(a);
        Matcher y = VERSION.matcher(b);
        if (!x.matches() || !y.matches()) {
            throw new IllegalArgumentException("not a version: " + a + " / " + b);
        }
        for (int i = 1; i <= 3; i++) {
            int c = Integer.compare(number(x.group(i)), number(y.group(i)));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static int number(String part) {
        return part == null ? 0 : Integer.parseInt(part);
    }
}
