package dev.weft.spi;

import dev.weft.NullArgumentException;
import java.util.List;

/**
 * Null checks of the public API's arguments, done first thing so that a {@code null} fails at the user's line with
 * a {@link NullArgumentException} naming the method and the parameter, never as a bare
 * {@link NullPointerException} from deep inside Weft, eagerly and inside {@code @Compile} alike.
 */
public final class Args {
    private Args() {
    }

    /** {@code value}, unless it is null: then fails naming {@code owner.method} and {@code param}. */
    public static <T> T notNull(T value, Class<?> owner, String method, String param) {
        if (value == null) {
            throw failure(owner, method, "argument '" + param + "'");
        }
        return value;
    }

    /** {@code values}, unless it or one of its elements is null (see {@link #notNull}). */
    public static <T> T[] noNulls(T[] values, Class<?> owner, String method, String param) {
        notNull(values, owner, method, param);
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                throw failure(owner, method, param + "[" + i + "]");
            }
        }
        return values;
    }

    /** {@code values}, unless it or one of its elements is null (see {@link #notNull}). */
    public static <T> List<T> noNulls(List<T> values, Class<?> owner, String method, String param) {
        notNull(values, owner, method, param);
        int i = 0;
        for (T v : values) {
            if (v == null) {
                throw failure(owner, method, param + ".get(" + i + ")");
            }
            i++;
        }
        return values;
    }

    private static NullArgumentException failure(Class<?> owner, String method, String what) {
        return new NullArgumentException(SourceLocation.capture(), owner.getSimpleName() + "." + method + ": " + what
                + " is null");
    }
}
