package dev.weft.backends.cli;

import java.util.concurrent.atomic.AtomicInteger;

/** Counts the calls of the default-package class's main, which tests cannot name from a package. */
public final class DefaultPackageMainCalls {
    private static final AtomicInteger CALLS = new AtomicInteger();

    private DefaultPackageMainCalls() {
    }

    public static void called() {
        CALLS.incrementAndGet();
    }

    static void reset() {
        CALLS.set(0);
    }

    static int count() {
        return CALLS.get();
    }
}
