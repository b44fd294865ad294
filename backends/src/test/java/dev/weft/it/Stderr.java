package dev.weft.it;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a piece of a test writes on {@code System.err} (warnings Weft prints once), restoring the stream after. */
public final class Stderr {
    private Stderr() {
    }

    /** Runs {@code body} with {@code System.err} captured; returns what it wrote. */
    public static String of(Runnable body) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(err);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
