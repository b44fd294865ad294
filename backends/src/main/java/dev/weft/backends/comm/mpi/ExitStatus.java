package dev.weft.backends.comm.mpi;

import java.util.OptionalInt;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The status this JVM is exiting with, as passed to {@code Runtime.exit}: {@code System.exit(n)}, or the JVM's own
 * exit on {@code SIGINT}, {@code SIGTERM} or {@code SIGHUP} (128 + the signal's number). A shutdown hook has no
 * other way to learn it. The JDK logs every {@code Runtime.exit} call, before any shutdown hook runs, to the
 * {@code System.Logger} named {@code java.lang.Runtime} when that logger is enabled at {@code DEBUG} (see
 * {@code Runtime.exit}); {@link #watch} enables it through {@code java.util.logging}, the default backend, and
 * reads the status from the record. Under another logging backend (a custom {@code LoggerFinder}) the status stays
 * unknown. The logger's other handlers still see the record (the console handler drops it: its level is
 * {@code INFO}).
 */
final class ExitStatus {
    private static final Pattern STATUS = Pattern.compile("status: (-?\\d+)$");
    /** Held here: {@code java.util.logging} keeps loggers only weakly, and a new one would have no handler. */
    private static Logger logger;
    private static volatile int status;
    private static volatile boolean known;

    private ExitStatus() {
    }

    /** Starts recording exit statuses; idempotent. */
    static synchronized void watch() {
        if (logger != null) {
            return;
        }
        logger = Logger.getLogger("java.lang.Runtime");
        logger.setLevel(Level.FINE);
        logger.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                Matcher m = STATUS.matcher(String.valueOf(record.getMessage()));
                if (m.find()) {
                    status = Integer.parseInt(m.group(1));
                    known = true;
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
    }

    /** The status of the last {@code Runtime.exit} call since {@link #watch}, or empty if none was seen. */
    static OptionalInt last() {
        return known ? OptionalInt.of(status) : OptionalInt.empty();
    }
}
