package dev.consistencykit.versioning.internal;

import java.util.concurrent.ConcurrentMap;

import org.bson.BsonValue;
import org.bson.codecs.configuration.CodecRegistry;

import com.google.common.cache.CacheBuilder;

import dev.consistencykit.core.spi.Ids;

/**
 * The highest version this process has read of each tree, for the {@value #MAX_TREES} trees read most recently: a
 * floor below which a current read need not look for item versions still visible ({@link VersionStore#readTree}).
 * A hint only: the read that uses one checks it against the version it reads, and reads again without it when the
 * root is below (a tree deleted and made again), so a wrong or stale entry costs a round trip, never an item.
 *
 * <p>Thread-safe.
 */
final class KnownVersions {

    /** Trees remembered; the least recently read is forgotten first. */
    static final int MAX_TREES = 10_000;

    private final CodecRegistry codecs;
    private final ConcurrentMap<BsonValue, Long> versions = CacheBuilder.newBuilder().maximumSize(MAX_TREES)
            .<BsonValue, Long>build().asMap();

    KnownVersions(CodecRegistry codecs) {
        this.codecs = codecs;
    }

    /** The highest version read of tree {@code rootId}, or {@code null}. */
    Long floor(Object rootId) {
        return versions.get(Ids.idKey(rootId, codecs));
    }

    /** Learns that tree {@code rootId} was read at {@code version}. */
    void learn(Object rootId, long version) {
        versions.merge(Ids.idKey(rootId, codecs), version, Math::max);
    }

    /** Forgets tree {@code rootId}: its root was found below what this process had read. */
    void forget(Object rootId) {
        versions.remove(Ids.idKey(rootId, codecs));
    }
}
