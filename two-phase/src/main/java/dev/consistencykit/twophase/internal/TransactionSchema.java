package dev.consistencykit.twophase.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.bson.Document;
import org.bson.conversions.Bson;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.ServerClock;
import dev.consistencykit.core.spi.Transition;
import dev.consistencykit.twophase.CancellationReason;
import dev.consistencykit.twophase.TransactionState;

/** The names two-phase commit stores on a transaction's record and its participant entries. */
final class TransactionSchema {

    // transaction document fields
    static final String STATE = "state";
    static final String LABEL = "label";
    static final String PARTICIPANTS = "participants";
    static final String SPEC = "spec";
    static final String HISTORY = "history";
    static final String OWNER = "owner";
    static final String LEASE = "leaseExpiresAt";
    static final String TOKEN = "fencingToken";
    static final String LAST_MODIFIED = Transition.DEFAULT_LAST_MODIFIED_FIELD;
    static final String CREATED = "createdAt";
    static final String REASON = "reason";
    static final String LAST_ERROR = "lastError";
    /** Set by recovery on a transaction it cannot finish: {@code {reason, at}}; an operator removes it to retry. */
    static final String SET_ASIDE = "setAside";
    // participant entry fields
    static final String P_COLLECTION = "c";
    static final String P_ID = "id";
    static final String P_PRE = "pre";
    static final String P_PREPARE = "prepare";
    static final String P_COMMIT = "commit";
    static final String P_ROLLBACK = "rollback";
    static final String P_FUNDS = "funds";

    /**
     * The cancellations a caller is told of by an exception: every reason but {@link CancellationReason#STALE}, which
     * recovery decides when the owner is gone.
     */
    static final Set<CancellationReason> CALLER_REASONS = EnumSet.complementOf(EnumSet.of(CancellationReason.STALE));
    static final List<String> IN_FLIGHT = TransactionState.IN_FLIGHT.stream().map(TransactionState::stored)
            .sorted().toList();

    private TransactionSchema() {
    }

    /** A cancellation's reason as stored: its code ({@link CancellationReason#stored}), participant and message. */
    static Document reason(CancellationReason code, String participant, String message) {
        Document reason = new Document("code", code.stored()).append("message", message);
        if (participant != null) {
            reason.append("participant", participant);
        }
        return reason;
    }

    static Map<String, List<Object>> idsByCollection(Document tx) {
        return idsByCollection(tx.getList(PARTICIPANTS, Document.class));
    }

    static Map<String, List<Object>> idsByCollection(List<Document> participants) {
        Map<String, List<Object>> groups = new LinkedHashMap<>();
        for (Document p : participants) {
            groups.computeIfAbsent(p.getString(P_COLLECTION), k -> new ArrayList<>()).add(p.get(P_ID));
        }
        return groups;
    }

    /** When a lease taken now on {@code clock} for {@code lease} runs out. */
    static Date leaseExpiry(ServerClock clock, Duration lease) {
        return Date.from(clock.now().plus(lease));
    }

    /** The update that claims a record for {@code owner}: a new lease and the next fencing token. */
    static Bson claimUpdate(String owner, boolean fromInitial, Date leaseExpiry) {
        List<Bson> updates = new ArrayList<>();
        updates.add(Updates.set(OWNER, owner));
        updates.add(Updates.set(LEASE, leaseExpiry));
        updates.add(Updates.inc(TOKEN, 1L));
        updates.add(Updates.currentDate(LAST_MODIFIED));
        if (fromInitial) {
            updates.add(Updates.set(STATE, TransactionState.PENDING.stored()));
            updates.add(Updates.push(HISTORY, TransactionState.PENDING.stored()));
        }
        return Updates.combine(updates);
    }

    /** The scratch collection of the consistent read's replays for the transactions collection {@code transactions}.
     */
    static String scratchName(String transactions) {
        return transactions + ".replay";
    }
}
