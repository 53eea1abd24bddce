package dev.consistencykit.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import dev.consistencykit.core.ConsistencyException;
import dev.consistencykit.core.OutcomeUnknownException;

/**
 * Every public call of an entry type against every way a network or server gets sick, through a
 * {@link FaultyNetwork}: a socket error once before the request is sent on, a reply lost once after it was applied, a
 * write-concern error once on a write, a time-limit error once (after the command was applied), and a hung server. Each call must end within its bound with a result or a
 * {@link ConsistencyException}: never a raw driver exception, never a hang; and a call that met a write-concern error
 * and returned normally must have had an acknowledged write since (its write concern was confirmed).
 *
 * <pre>{@code
 * List<String> violations = FaultMatrix.builder(network)
 *         .bound(Duration.ofSeconds(6))
 *         .call("transfer", () -> payments.transfer(Transfer.of(OperationId.of("t-9"), "alice", "bob", 1)))
 *         .call("status", payments::status)
 *         .run();
 * }</pre>
 */
public final class FaultMatrix {

    /** A way the network or the server gets sick. */
    public enum Fault {
        /** The next command's connection drops before the command reaches the server. */
        SOCKET_ERROR_ONCE,
        /** The next command is applied, then its connection drops before the reply. */
        REPLY_LOST_ONCE,
        /** The next write is applied, and its reply carries a write-concern error. */
        WRITE_CONCERN_ERROR_ONCE,
        /** The next command is applied, and its reply is the server's time-limit error ({@code MaxTimeMSExpired}). */
        TIMEOUT_ONCE,
        /** Nothing moves until the call has ended (or its bound passed). */
        HANG
    }

    /** A call under test. */
    @FunctionalInterface
    public interface Call {
        /** Makes the call; its result is ignored. */
        void run() throws Exception;
    }

    private record Named(String name, Call call) {
    }

    /** Builds a matrix. */
    public static final class Builder {
        private final FaultyNetwork network;
        private final List<Named> calls = new ArrayList<>();
        private final List<Fault> faults = new ArrayList<>(List.of(Fault.values()));
        private Duration bound = Duration.ofSeconds(10);
        private Runnable reset = () -> { };
        private Consumer<String> progress = s -> { };

        private Builder(FaultyNetwork network) {
            this.network = Objects.requireNonNull(network, "network");
        }

        /** The longest a call may take under any fault (its operation timeout plus a margin). Default 10 s. */
        public Builder bound(Duration value) {
            this.bound = Objects.requireNonNull(value, "bound");
            return this;
        }

        /** Only these faults. Default: all. */
        public Builder faults(List<Fault> value) {
            faults.clear();
            faults.addAll(value);
            return this;
        }

        /** Runs before every call, with the network healthy (to re-seed what a call consumed). */
        public Builder reset(Runnable value) {
            this.reset = Objects.requireNonNull(value, "reset");
            return this;
        }

        /** Receives one line per call and fault. */
        public Builder progress(Consumer<String> value) {
            this.progress = Objects.requireNonNull(value, "progress");
            return this;
        }

        /** A call under test. */
        public Builder call(String name, Call call) {
            calls.add(new Named(name, Objects.requireNonNull(call, name)));
            return this;
        }

        /**
         * Runs every call under every fault.
         *
         * @return one line per violation (empty: none)
         */
        public List<String> run() {
            List<String> violations = new ArrayList<>();
            for (Fault fault : faults) {
                for (Named named : calls) {
                    network.heal();
                    reset.run();
                    String result = runOne(named, fault);
                    progress.accept(fault + " " + named.name() + ": " + result);
                    if (result.startsWith("VIOLATION")) {
                        violations.add(fault + " " + named.name() + ": " + result);
                    }
                }
            }
            network.heal();
            return violations;
        }

        private String runOne(Named named, Fault fault) {
            switch (fault) {
                case SOCKET_ERROR_ONCE -> network.dropNextRequests(1);
                case REPLY_LOST_ONCE -> network.dropNextReplies(1);
                case WRITE_CONCERN_ERROR_ONCE -> network.writeConcernErrorOnNextWrites(1);
                case TIMEOUT_ONCE -> network.timeLimitErrorOnNextCommands(1);
                case HANG -> network.hang();
                default -> throw new IllegalStateException(fault.toString());
            }
            long injectedBefore = network.writeConcernErrorsInjected();
            CompletableFuture<Throwable> done = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    named.call().run();
                    done.complete(null);
                } catch (Exception e) {
                    done.complete(e);
                }
            }, "fault-matrix-" + named.name());
            t.setDaemon(true);
            t.setUncaughtExceptionHandler((thread, error) -> done.complete(error));
            long start = System.nanoTime();
            t.start();
            Throwable outcome;
            try {
                outcome = done.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                network.heal();
                return "VIOLATION: still running after " + bound.toMillis() + " ms";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException(e);
            } finally {
                network.heal();
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            if (outcome == null) {
                boolean injected = network.writeConcernErrorsInjected() > injectedBefore;
                if (injected && network.writesAcknowledgedSinceWriteConcernError() == 0) {
                    return "VIOLATION: returned normally although its write concern was never confirmed";
                }
                return "ok in " + millis + " ms";
            }
            if (outcome instanceof ConsistencyException) {
                return (outcome instanceof OutcomeUnknownException ? "outcome unknown" : outcome.getClass()
                        .getSimpleName()) + " in " + millis + " ms";
            }
            return "VIOLATION: raw " + outcome.getClass().getName() + ": " + outcome.getMessage();
        }
    }

    private FaultMatrix() {
    }

    /** A matrix over {@code network}. */
    public static Builder builder(FaultyNetwork network) {
        return new Builder(network);
    }
}
