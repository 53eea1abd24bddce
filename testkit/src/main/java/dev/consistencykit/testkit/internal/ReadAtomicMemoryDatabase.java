package dev.consistencykit.testkit.internal;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;

/** A memory database whose collections are {@link ReadAtomicMemoryCollection}s. */
final class ReadAtomicMemoryDatabase extends MemoryDatabase {

    ReadAtomicMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, cursorRegistry);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new ReadAtomicMemoryCollection(this, collectionName, options, cursorRegistry);
    }
}
