package dev.consistencykit.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.bson.Document;
import org.junit.jupiter.api.Test;

import com.mongodb.client.model.Updates;

import dev.consistencykit.core.InvalidInputException;

/** {@link UpdateGrammar}: operators only, never a plain field beside them. */
class UpdateGrammarTest {

    @Test
    void shouldRejectUpdateSpecThatMixesOperatorsAndPlainFields() {
        assertThat(UpdateGrammar.updateSpec("s", "update", Updates.inc("balance", 5)).containsKey("$inc")).isTrue();

        assertThatThrownBy(() -> UpdateGrammar.updateSpec("s", "update",
                new Document("$inc", new Document("balance", 5)).append("name", "x")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("mixes operators and plain fields");
        assertThatThrownBy(() -> UpdateGrammar.updateSpec("s", "update", new Document("name", "x")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("replacement");
        assertThatThrownBy(() -> UpdateGrammar.updateSpec("s", "update", new Document()))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must not be empty");
    }
}
