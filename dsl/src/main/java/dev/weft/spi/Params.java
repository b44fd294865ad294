package dev.weft.spi;

/**
 * Compile-time parameters of one primitive application. Implementations are immutable values with
 * structural {@code equals}/{@code hashCode} (CSE and the compile cache rely on it) and a {@code toString}
 * that reads well in IR dumps.
 */
public interface Params {
    /** For primitives without parameters. */
    Params NONE = new Params() {
        @Override
        public String toString() {
            return "";
        }
    };
}
