package dev.weft.backends.timeline;

import dev.weft.backends.json.JsonText;

/** Builds the text of one flat JSON object, field by field, in the order given. */
public final class JsonObjectText {
    private final StringBuilder text = new StringBuilder("{");

    /** Adds a string field. */
    public JsonObjectText field(String name, String value) {
        key(name);
        JsonText.quote(value, text);
        return this;
    }

    /** Adds a number field. */
    public JsonObjectText field(String name, long value) {
        key(name);
        text.append(value);
        return this;
    }

    private void key(String name) {
        if (text.length() > 1) {
            text.append(',');
        }
        JsonText.quote(name, text);
        text.append(':');
    }

    @Override
    public String toString() {
        return text + "}";
    }
}
