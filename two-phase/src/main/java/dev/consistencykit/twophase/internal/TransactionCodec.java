package dev.consistencykit.twophase.internal;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static dev.consistencykit.twophase.internal.TransactionSchema.LABEL;
import static dev.consistencykit.twophase.internal.TransactionSchema.PARTICIPANTS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COLLECTION;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_COMMIT;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_FUNDS;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ID;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_PRE;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_PREPARE;
import static dev.consistencykit.twophase.internal.TransactionSchema.P_ROLLBACK;
import static dev.consistencykit.twophase.internal.TransactionSchema.SPEC;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import dev.consistencykit.core.InvalidInputException;
import dev.consistencykit.core.spi.Ids;
import dev.consistencykit.core.spi.Names;
import dev.consistencykit.core.spi.Values;
import dev.consistencykit.twophase.Participant;
import dev.consistencykit.twophase.TwoPhaseConfig;
import dev.consistencykit.twophase.TwoPhaseTransaction;

/**
 * Encoding and validating a transaction before its first write.
 */
public final class TransactionCodec {

    private final TwoPhaseConfig config;
    private final CodecRegistry registry;
    private final SpecCodec codec;

    /** The encoding of a transaction with the application's codecs. */
    TransactionCodec(TwoPhaseConfig config, CodecRegistry registry) {
        this.config = config;
        this.registry = registry;
        this.codec = new SpecCodec(config.name(), java.util.Set.of(config.markerField(), config.reservationField()),
                registry);
    }

    /** The application's codecs: user values are encoded and checked with them. */
    public CodecRegistry registry() {
        return registry;
    }

    // ---------------------------------------------------------------- encoding and validation

    static final JsonWriterSettings SPEC_JSON = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED)
            .build();

    /**
     * The full participant specs, stored as one canonical extended-JSON string: a string is far cheaper for the server
     * to copy on every state change than a tree of small documents, stays readable, and replays exactly (extended
     * JSON keeps every BSON type). Equal transactions render equal strings.
     */
    static String spec(String label, List<Document> participants) {
        return new Document(LABEL, label).append(PARTICIPANTS, participants).toJson(SPEC_JSON);
    }

    /**
     * Validates {@code tx} and renders it in stored form; nothing is written.
     *
     * @param fundsPaths for each participant index, the field whose unmet condition means insufficient funds
     */
    public EncodedTransaction encode(TwoPhaseTransaction tx, Map<Integer, String> fundsPaths) {
        Object id = Ids.operationId(config.name(), "transaction id", tx.id().value());
        if (tx.participants().isEmpty()) {
            throw new InvalidInputException(config.name(), "participants", "participants must not be empty: a"
                    + " transaction needs at least one participant");
        }
        Set<List<Object>> seen = new HashSet<>();
        List<Document> participants = new ArrayList<>();
        for (int i = 0; i < tx.participants().size(); i++) {
            Participant p = tx.participants().get(i);
            String where = "participants[" + i + "]";
            Names.fieldName(config.name(), where + ".collection", p.collection());
            Object docId = Ids.documentId(config.name(), where + ".documentId", p.documentId(), registry);
            if (p.collection().equals(config.transactionsCollection())) {
                throw new InvalidInputException(config.name(), where + ".collection", where
                        + " must not be the transactions collection '" + p.collection() + "'");
            }
            if (!seen.add(List.of(p.collection(), Ids.idKey(docId, registry)))) {
                throw new InvalidInputException(config.name(), where, where + " names document " + p
                        + " a second time; a document takes part in a transaction once");
            }
            Document entry = new Document(P_COLLECTION, p.collection()).append(P_ID, docId)
                    .append(P_PRE, codec.encodeCondition(where + ".precondition", p.precondition()))
                    .append(P_PREPARE, codec.encodeUpdate(where + ".prepare", p.prepare()))
                    .append(P_COMMIT, codec.encodeUpdate(where + ".commit", p.commit()))
                    .append(P_ROLLBACK, codec.encodeUpdate(where + ".rollback", p.rollback()));
            String funds = fundsPaths.get(i);
            if (funds != null) {
                entry.append(P_FUNDS, funds);
            }
            participants.add(entry);
        }
        Names.fieldName(config.name(), "label", tx.label());
        EncodedTransaction encoded = new EncodedTransaction(id, tx.label(), participants, spec(tx.label(),
                participants));
        // the record holds the spec and the index of participants: it must fit in one document, with room for the
        // record's own fields, or the server would refuse it after the first write
        Values.checkSize(config.name(), "transaction", new Document(SPEC, encoded.spec())
                .append(PARTICIPANTS, encoded.index()).toBsonDocument(Document.class, registry),
                Values.MAX_VALUE_BYTES);
        return encoded;
    }

    static EncodedTransaction decode(Document tx) {
        String spec = tx.getString(SPEC);
        List<Document> participants = spec == null ? List.of()
                : Document.parse(spec).getList(PARTICIPANTS, Document.class);
        return new EncodedTransaction(tx.get("_id"), tx.getString(LABEL), participants, spec);
    }
}
