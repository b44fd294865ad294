package org.example;

/** Source lines of the test code, for asserting the locations that errors name. */
final class Lines {
    private Lines() {
    }

    /** The line of the statement that calls this, plus {@code offset}. */
    static int here(int offset) {
        return StackWalker.getInstance().walk(s -> s.skip(1).findFirst().orElseThrow().getLineNumber()) + offset;
    }
}
