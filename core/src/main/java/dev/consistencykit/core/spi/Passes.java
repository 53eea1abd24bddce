package dev.consistencykit.core.spi;

import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.consistencykit.core.ForeignRecordException;
import dev.consistencykit.core.RetryPolicy;

/**
 * The rule every pass over many records (a recovery, a sweep, a settlement, a prune) follows when one record's writes
 * keep meeting concurrent writers: that record is left to the next pass, and the pass goes on with the others.
 *
 * <p>A real server answers two writers that need the same documents at once with a conflict (MongoDB's
 * {@code WriteConflict}, a deadlock on DocumentDB); a {@link RetryPolicy} retries it, and when its attempts run out
 * the record is still as it was or as a guarded write left it, which every pass is built to take up again. Ending
 * the whole pass there would leave every other record unrecovered for a conflict on one. A record whose stored values
 * are of another type than the pattern writes ({@link ForeignRecordException#isForeignShape}: written by something
 * else) is set aside the same way, logged at WARN, since no pass will read it better. Anything else (a server that
 * does not answer, a refusal, a deadline) still ends the pass.
 *
 * <p>Stateless and thread-safe.
 */
public final class Passes {

    private static final Logger LOG = LoggerFactory.getLogger(Passes.class);

    private Passes() {
    }

    /**
     * What {@code step}, one record's part of a pass, returned; or {@code leftAlone} when its writes met concurrent
     * writers on every attempt ({@link MongoErrors#isContention}), logged with {@code what} names the record.
     *
     * @param instanceName the instance's name, for the log
     * @param what         the record and what the pass does to it, for the log ("transaction 42")
     * @param leftAlone    what the pass counts for a record it leaves to the next one
     */
    public static <T> T orLeftToNextPass(String instanceName, String what, T leftAlone, Supplier<T> step) {
        try {
            return step.get();
        } catch (RuntimeException e) {
            if (ForeignRecordException.isForeignShape(e) || e instanceof ForeignRecordException) {
                // written by something else: no pass will read it better, and the others must not wait for it
                LOG.warn("[{}] {} set aside: its record holds a value of another type than this pattern writes ({})",
                        instanceName, what, e.toString());
                return leftAlone;
            }
            if (!MongoErrors.isContention(e)) {
                throw e;
            }
            LOG.info("[{}] {} left to the next pass: its writes met concurrent writers on every attempt",
                    instanceName, what);
            return leftAlone;
        }
    }
}
