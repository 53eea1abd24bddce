package dev.consistencykit.embedded.internal;

import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;

/**
 * A memory database whose collections are {@link ReadAtomicMemoryCollection}s, whose non-unique indexes serve
 * equality queries ({@link EqualityIndex}), and whose {@code insert} command
 * reports how many documents were really inserted: the stock one reports {@code n} = every document sent, even
 * when some were refused (a duplicate key in an unordered batch), so a bulk write's inserted count was wrong.
 */
final class ReadAtomicMemoryDatabase extends MemoryDatabase {

    private static final Logger LOG = LoggerFactory.getLogger(ReadAtomicMemoryDatabase.class);

    ReadAtomicMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, cursorRegistry);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new ReadAtomicMemoryCollection(this, collectionName, options, cursorRegistry);
    }

    /**
     * A non-unique index becomes an {@link EqualityIndex}, which serves equality queries on its leading key; the stock
     * server accepts such an index and ignores it.
     */
    @Override
    protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                        boolean sparse) {
        return new EqualityIndex(indexName, keys, sparse);
    }

    /** A unique compound index also serves equality on its leading key ({@link LeadingKeyUniqueIndex}). */
    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                     boolean sparse) {
        Index<Integer> unique = super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
        return keys.size() > 1 ? new LeadingKeyUniqueIndex(unique, keys, sparse) : unique;
    }

    /** The commands a client that was given a user and password sends first. */
    private static final Set<String> AUTHENTICATION = Set.of("saslstart", "saslcontinue", "authenticate");

    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver,
                                  Oplog oplog) {
        if (AUTHENTICATION.contains(command.toLowerCase(Locale.ROOT))) {
            // the stock server logs "no such command" with a stack trace, and the client learns nothing useful
            LOG.warn("a client tried to authenticate ({}); this embedded server has no authentication: connect"
                    + " without a user and password", command);
            Document refused = new Document("ok", 0.0);
            refused.put("errmsg", "this embedded server (consistency-kit serve) has no authentication: connect"
                    + " without a user and password");
            refused.put("code", 18);
            refused.put("codeName", "AuthenticationFailed");
            return refused;
        }
        if (command.equalsIgnoreCase("dropIndexes") && "*".equals(query.get("index"))) {
            return dropAllIndexes(channel, query, databaseResolver, oplog);
        }
        if (command.equalsIgnoreCase("aggregate") && IndexedAggregation.applies(query)) {
            return IndexedAggregation.run(this, query, databaseResolver, oplog);
        }
        Document result = super.handleCommand(channel, command, query, databaseResolver, oplog);
        if (command.equalsIgnoreCase("insert") && result.get("writeErrors") instanceof List<?> errors
                && !errors.isEmpty() && query.get("documents") instanceof List<?> documents) {
            boolean ordered = !Boolean.FALSE.equals(query.get("ordered"));
            int inserted;
            if (ordered) {
                // an ordered insert stops at its first error: everything before it was inserted
                inserted = ((Number) ((Document) errors.get(0)).get("index")).intValue();
            } else {
                inserted = documents.size() - errors.size();
            }
            result.put("n", inserted);
        }
        return result;
    }

    /**
     * {@code dropIndexes} with {@code "*"}: the stock server walks the indexes of every collection of the database and
     * fails on the first that is not the named collection's ({@code IndexNotFound}); this drops the named collection's
     * indexes but {@code _id}'s, one by one, as mongod does.
     */
    private Document dropAllIndexes(Channel channel, Document query, DatabaseResolver databaseResolver, Oplog oplog) {
        String collection = String.valueOf(query.get("dropIndexes"));
        Document listed = super.handleCommand(channel, "listIndexes", new Document("listIndexes", collection),
                databaseResolver, oplog);
        List<String> names = new java.util.ArrayList<>();
        if (((Document) listed.get("cursor")).get("firstBatch") instanceof List<?> indexes) {
            for (Object index : indexes) {
                names.add(String.valueOf(((Document) index).get("name")));
            }
        }
        for (String name : names) {
            if (!name.equals("_id_")) {
                Document one = new Document("dropIndexes", collection);
                one.put("index", name);
                super.handleCommand(channel, "dropIndexes", one, databaseResolver, oplog);
            }
        }
        Document result = new Document("nIndexesWas", names.size());
        result.put("ok", 1.0);
        return result;
    }
}
