package dev.weft.backends.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonParserTest {
    @Test
    void parsesNestedValues() {
        Object v = JsonParser.parse(" {\"a\": [1, -2.5e1, true, false, null], \"b\\n\": {\"c\": \"x\\\"\\u00e9\"}} ");
        assertThat(v).isEqualTo(Map.of("a", Arrays.asList(1.0, -25.0, true, false, null), "b\n", Map.of("c", "x\"é")));
    }

    @Test
    void writesWhatItParses() {
        String text = "{\"traceEvents\":[{\"ts\":1.25,\"n\":3,\"s\":\"a\\\\b\\t\"}],\"e\":[],\"o\":{}}";
        StringBuilder out = new StringBuilder();
        JsonText.write(JsonParser.parse(text), out);
        assertThat(out).hasToString(text);
    }

    @Test
    void rejectsMalformedText() {
        for (String bad : List.of("{", "[1,]", "{\"a\" 1}", "\"open", "tru", "1 2", "{\"a\":-}")) {
            assertThatThrownBy(() -> JsonParser.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("bad JSON at line 1, column ");
        }
    }

    @Test
    void namesTheLineAndColumnOfAnError() {
        assertThatThrownBy(() -> JsonParser.parse("{\"a\": 1,\n  \"b\": \"\\uzz\"}"))
                .hasMessage("bad JSON at line 2, column 11: a \\u escape needs four hexadecimal digits");
        assertThatThrownBy(() -> JsonParser.parse("[\u0001]")).hasMessage("bad JSON at line 1, column 2: unexpected"
                + " character U+0001");
    }

    @Test
    void nestingIsLimitedInsteadOfTakingTheStack() {
        String deepest = "[".repeat(JsonParser.MAX_DEPTH) + "]".repeat(JsonParser.MAX_DEPTH);
        assertThat(JsonParser.parse(deepest)).isInstanceOf(List.class);
        assertThatThrownBy(() -> JsonParser.parse("{\"a\":" + "[".repeat(100_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad JSON at line 1, column 517: arrays and objects nested deeper than 512");
    }
}
