package dev.consistencykit.versioning;

/**
 * The earlier name of {@link VersionedStoreListener}, kept so that existing listeners compile; every pattern's hooks are now named after
 * its entry type ({@code <Entry>Listener}, like {@code <Entry>Config} and {@code <Entry>Metrics}).
 *
 * @deprecated implement {@link VersionedStoreListener}; this name goes in a later release.
 */
@Deprecated(since = "0.1.0", forRemoval = true)
public interface VersionListener extends VersionedStoreListener {
}
