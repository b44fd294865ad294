package dev.weft.backends.timeline;

/**
 * What an event records besides its times: made once per call site (a compiled call, an op of a program, a bound
 * communication), so that recording an event stores a reference, not text.
 *
 * @param category {@code call}, {@code kernel} or {@code comm}
 * @param name     the event's name in the viewer
 * @param args     the event's {@code args}, as JSON object text
 */
public record EventSite(String category, String name, String args) {
    public static final String CALL = "call";
    public static final String KERNEL = "kernel";
    public static final String COMM = "comm";

    /** A compiled call of {@code method} (like {@code Heat.step}). */
    public static EventSite call(String method) {
        return new EventSite(CALL, method, new JsonObjectText().field("method", method).toString());
    }
}
