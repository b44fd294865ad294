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

        boolean donated(Tensor t);

        String unusable(Tensor t);

        void consume(Tensor t, String why, boolean freeBuffer);

        void pin(Tensor t);
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

    /**
     * The buffer of a concrete tensor, or {@code null} for a traced one.
     *
     * @throws dev.weft.WeftException naming the caller's line if the tensor was freed (by its scope or a donation)
     */
    public static MemorySegment data(Tensor t) {
        return impl().data(t);
    }

    /**
     * Why {@code t} can no longer be used (its scope closed, it was donated), as an error message without location,
     * or {@code null} while it can.
     */
    public static String unusable(Tensor t) {
        return impl().unusable(t);
    }

    /** True if {@code t} was {@linkplain Tensor#donate() donated}: a compiled call may take its buffer. */
    public static boolean donated(Tensor t) {
        return impl().donated(t);
    }

    /**
     * Marks {@code t} unusable after a compiled call took it as a donation, stating {@code why} in later errors; frees
     * its buffer if {@code freeBuffer} (else its buffer now belongs to a result).
     */
    public static void consume(Tensor t, String why, boolean freeBuffer) {
        impl().consume(t, why, freeBuffer);
    }

    /** Keeps {@code t}'s buffer until {@code t} is unreachable, whatever scope it was made in (a captured constant). */
    public static void pin(Tensor t) {
        impl().pin(t);
    }

    public static Aval aval(Tensor t) {
        return impl().aval(t);
    }

    /** The payload of a traced tensor, or {@code null} for a concrete one. */
    public static Traced traced(Tensor t) {
        return impl().traced(t);
    }
}
