package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import dev.consistencykit.core.InvalidInputException;

/** {@link Names}: collection and field names, and dotted paths. */
class NamesTest {

    @Test
    void shouldRejectFieldNamesStartingWithDollarOrContainingDot() {
        assertThat(Names.fieldName("s", "field", "balance")).isEqualTo("balance");
        assertThatThrownBy(() -> Names.fieldName("s", "field", "$where")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("must not start with '$'").hasMessageContaining("'$where'");
        assertThatThrownBy(() -> Names.fieldName("s", "field", "a.b")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("must not contain '.'");
        assertThatThrownBy(() -> Names.fieldName("s", "field", "")).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void shouldAcceptDottedPathsOfPlainNamesOnly() {
        assertThat(Names.fieldPath("s", "path", "author.name")).isEqualTo("author.name");
        assertThatThrownBy(() -> Names.fieldPath("s", "path", "author.$name"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> Names.fieldPath("s", "path", "author..name"))
                .isInstanceOf(InvalidInputException.class);
    }
}
