package dev.consistencykit.embedded.internal;

import java.util.List;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A unique compound index that also serves equality on its leading key. The stock unique index is used only when a
 * query names exactly its keys; MongoDB also uses a compound index for a query on its leading key alone (for example
 * a ledger's {@code {changes.account, changes.seqId}} for "every change of this account"). This keeps the stock index
 * for uniqueness and for the queries it serves, and an {@link EqualityIndex} shadow for the rest.
 *
 * <p>Guarded by the collection's lock, like the server's own indexes.
 */
final class LeadingKeyUniqueIndex extends Index<Integer> {

    private final Index<Integer> unique;
    private final EqualityIndex leading;

    LeadingKeyUniqueIndex(Index<Integer> unique, List<IndexKey> keys, boolean sparse) {
        super(unique.getName(), keys, sparse);
        this.unique = unique;
        this.leading = new EqualityIndex(unique.getName(), keys, sparse);
    }

    @Override
    public boolean isUnique() {
        return true;
    }

    @Override
    public Integer getPosition(Document document) {
        return unique.getPosition(document);
    }

    @Override
    public void checkAdd(Document document, MongoCollection<Integer> collection) {
        unique.checkAdd(document, collection);
    }

    @Override
    public void add(Document document, Integer position, MongoCollection<Integer> collection) {
        unique.add(document, position, collection);
        leading.add(document, position, collection);
    }

    @Override
    public Integer remove(Document document) {
        leading.remove(document);
        return unique.remove(document);
    }

    @Override
    public boolean canHandle(Document query) {
        return unique.canHandle(query) || leading.canHandle(query);
    }

    @Override
    public Iterable<Integer> getPositions(Document query) {
        return unique.canHandle(query) ? unique.getPositions(query) : leading.getPositions(query);
    }

    @Override
    public long getCount() {
        return unique.getCount();
    }

    @Override
    public boolean isEmpty() {
        return unique.isEmpty();
    }

    @Override
    public long getDataSize() {
        return unique.getDataSize();
    }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        unique.checkUpdate(oldDocument, newDocument, collection);
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Integer position,
                              MongoCollection<Integer> collection) {
        unique.updateInPlace(oldDocument, newDocument, position, collection);
        leading.updateInPlace(oldDocument, newDocument, position, collection);
    }

    @Override
    public void drop() {
        unique.drop();
        leading.drop();
    }
}
