package dev.consistencykit.cli.lab;

import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/** An instance from its actions; {@code background} and {@code patternRead} may be null (none). */
record ContenderActions(Consumer<Random> operation, BooleanSupplier backgroundPass, Consumer<Duration> recovery,
                       Predicate<Random> rawRead, Function<Random, Optional<Boolean>> patternRead)
        implements Contender.Instance {

    ContenderActions(Consumer<Random> operation, Consumer<Duration> recovery, Predicate<Random> rawRead) {
        this(operation, null, recovery, rawRead, null);
    }

    @Override
    public void operation(Random random) {
        operation.accept(random);
    }

    @Override
    public boolean background() {
        return backgroundPass != null && backgroundPass.getAsBoolean();
    }

    @Override
    public void recover(Duration staleAfter) {
        recovery.accept(staleAfter);
    }

    @Override
    public boolean rawReadIsConsistent(Random random) {
        return rawRead.test(random);
    }

    @Override
    public Optional<Boolean> patternReadIsConsistent(Random random) {
        return patternRead == null ? Optional.empty() : patternRead.apply(random);
    }
}
