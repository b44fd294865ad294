package dev.weft.spi;

import dev.weft.Tensor;
import java.lang.foreign.MemorySegment;

/**
 * Construction of and access to {@link Tensor} internals for interpreters and backends; not user API.
 * A concrete tensor owns a row-major native buffer that nobody writes after construction.
 */
public final class TensorAccess {
    /** Implemented by {@link Tensor}, which installs it when its class initialises. */
    public interface Impl {
        Tensor concrete(Aval aval, MemorySegment data);

        Tensor traced(Traced traced);

        MemorySegment data(Tensor t);

        Traced traced(Tensor t);

        Aval aval(Tensor t);
    }

    private static volatile Impl impl;

    private TensorAccess() {
    }

    public static void install(Impl i) {
        impl = i;
    }

    private static Impl impl() {
        Impl i = impl;
        if (i == null) {
            try {
                Class.forName(Tensor.class.getName(), true, Tensor.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            i = impl;
        }
        return i;
    }

    /** A tensor over {@code data}, which the caller hands over and must not write again. */
    public static Tensor concrete(Aval aval, MemorySegment data) {
        return impl().concrete(aval, data);
    }

    public static Tensor traced(Traced traced) {
        return impl().traced(traced);
    }

    /** The buffer of a concrete tensor, or {@code null} for a traced one. */
    public static MemorySegment data(Tensor t) {
        return impl().data(t);
    }

    public static Aval aval(Tensor t) {
        return impl().aval(t);
    }

    /** The payload of a traced tensor, or {@code null} for a concrete one. */
    public static Traced traced(Tensor t) {
        return impl().traced(t);
    }
}
