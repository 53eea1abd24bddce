package dev.consistencykit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** An id as this library prints it anywhere names that id again: the text of an operator's selection. */
class OperationIdPrintedTest {

    @Test
    void shouldNameEveryIdThatPrintsAsTheText() {
        ObjectId oid = new ObjectId();
        String hex = oid.toHexString();
        assertThat(OperationId.printedAs(hex)).containsExactly(OperationId.of(oid), OperationId.of(hex));
        assertThat(OperationId.printedAs("ObjectId(\"" + hex + "\")")).containsExactly(OperationId.of(oid));
        assertThat(OperationId.printedAs("{\"$oid\": \"" + hex + "\"}")).containsExactly(OperationId.of(oid));
        assertThat(OperationId.printedAs("42")).containsExactly(OperationId.of(42), OperationId.of("42"));
        assertThat(OperationId.printedAs("{\"$numberLong\": \"42\"}")).containsExactly(OperationId.of(42));
        assertThat(OperationId.printedAs("'j1'")).as("a log line's quotes").containsExactly(OperationId.of("j1"));
        assertThat(OperationId.printedAs(" j1 ")).containsExactly(OperationId.of("j1"));
        assertThat(OperationId.printedAs("99999999999999999999")).as("beyond a long: a string")
                .containsExactly(OperationId.of("99999999999999999999"));
        assertThat(OperationId.printedAs(hex.toUpperCase(java.util.Locale.ROOT))).hasSize(2);
        assertThatThrownBy(() -> OperationId.printedAs("''")).isInstanceOf(InvalidInputException.class);
    }
}
