package dev.weft.spi;

import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.TracedValueException;
import dev.weft.WeftException;

/** Builds Weft's exceptions, and re-raises a location-less one at the user's source line. */
public final class Errors {
    private Errors() {
    }

    public static ShapeException shape(String fmt, Object... args) {
        return new ShapeException(SourceLocation.UNKNOWN, String.format(fmt, args));
    }

    public static DTypeException dtype(String fmt, Object... args) {
        return new DTypeException(SourceLocation.UNKNOWN, String.format(fmt, args));
    }

    /** A custom reduce op {@code op} returned {@code got} (an aval, or what else) for two operands of {@code operand}. */
    public static WeftException customReduceResult(SourceLocation where, String op, Aval operand, String got) {
        return new WeftException(where, "custom reduce op '" + op + "' returned " + got + " for two " + operand
                + " operands; it must return " + operand + " (same dtype and shape, computed elementwise)");
    }

    /** The same kind of exception, with the same message, at {@code where}. */
    public static WeftException relocate(WeftException e, SourceLocation where) {
        String msg = e.getMessage();
        WeftException r = switch (e) {
            case ShapeException s -> new ShapeException(where, msg);
            case DTypeException d -> new DTypeException(where, msg);
            case TracedValueException t -> new TracedValueException(where, msg);
            default -> new WeftException(where, msg, e.getCause());
        };
        r.setStackTrace(e.getStackTrace());
        return r;
    }
}
