package dev.weft.it.comm;

/** Source positions of test code, so assertions on error messages do not hard-code line numbers. */
public final class CallSite {
    private CallSite() {
    }

    /** {@code File.java:line} of the caller's call site. */
    public static String here() {
        StackWalker.StackFrame f = StackWalker.getInstance().walk(s -> s.skip(1).findFirst()).orElseThrow();
        return f.getFileName() + ":" + f.getLineNumber();
    }
}
