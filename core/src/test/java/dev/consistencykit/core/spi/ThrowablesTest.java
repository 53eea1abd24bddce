package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import org.junit.jupiter.api.Test;

/**
 * An application's exception is described without trusting its methods: one whose getMessage() throws is still
 * described, and a listener throwing it is still logged and ignored instead of breaking the operation it observes.
 */
class ThrowablesTest {

    /** An application's exception whose message cannot be read. */
    private static final class Unreadable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        @Override
        public String getMessage() {
            throw new IllegalStateException("no message");
        }
    }

    @Test
    void shouldDescribeAnExceptionWhoseMessageCannotBeRead() {
        assertThat(Throwables.describe(new IllegalArgumentException("plain")))
                .isEqualTo("java.lang.IllegalArgumentException: plain");
        assertThat(Throwables.describe(new Unreadable())).isEqualTo(Unreadable.class.getName()
                + " (could not be described: its toString() threw java.lang.IllegalStateException)");
    }

    @Test
    void shouldIgnoreAListenerWhoseExceptionCannotDescribeItself() {
        assertThatCode(() -> Listeners.call("mail", () -> {
            throw new Unreadable();
        })).doesNotThrowAnyException();
    }
}
