package dev.consistencykit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The peers' versions, as the pom names them (written into {@code peers.properties} by the build). */
final class Peers {

    private Peers() {
    }

    /** A peer's version. */
    static String version(String peer) {
        try (InputStream in = Peers.class.getResourceAsStream("peers.properties")) {
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty(peer);
        } catch (IOException e) {
            throw new UncheckedIOException("peers.properties is missing from the build", e);
        }
    }
}
