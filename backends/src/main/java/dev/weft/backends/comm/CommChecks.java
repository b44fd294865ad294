package dev.weft.backends.comm;

import dev.weft.DType;
import dev.weft.comm.Comm;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;

/** Argument validation shared by the {@link Communicator} implementations; every failure is a {@link CommException}. */
public final class CommChecks {
    private CommChecks() {
    }

    /** A peer (destination, source or root) of {@code op} must be a rank of {@code comm}. */
    public static void peer(Communicator comm, String op, String role, int peer, SourceLocation where) {
        if (peer < 0 || peer >= comm.size()) {
            throw new CommException(where, String.format("%s on '%s': %s rank %d is outside [0, %d)",
                    op, comm.name(), role, peer, comm.size()));
        }
    }

    /** The source of a receive that takes wildcards: a rank of {@code comm} or {@link Comm#ANY_SOURCE}. */
    public static void sourceOrAny(Communicator comm, String op, int src, SourceLocation where) {
        if (src != Comm.ANY_SOURCE) {
            peer(comm, op, "source", src, where);
        }
    }

    /** The tag of a receive that takes wildcards: not negative, or {@link Comm#ANY_TAG}. */
    public static void tagOrAny(Communicator comm, String op, int tag, SourceLocation where) {
        if (tag != Comm.ANY_TAG) {
            tag(comm, op, tag, where);
        }
    }

    public static void tag(Communicator comm, String op, int tag, SourceLocation where) {
        if (tag < 0) {
            throw new CommException(where, String.format("%s on '%s': tag %d is negative", op, comm.name(), tag));
        }
    }

    /** A color of {@code split} must not be negative (every rank gets a communicator). */
    public static void color(Communicator comm, int color, SourceLocation where) {
        if (color < 0) {
            throw new CommException(where, String.format("split on '%s': color %d is negative; every rank gets a"
                    + " communicator, so a rank that wants none passes a color no other rank uses", comm.name(),
                    color));
        }
    }

    /**
     * {@code counts} of a variable-count collective must have one entry per rank of {@code comm}, none negative;
     * returns their sum.
     */
    public static long counts(Communicator comm, String op, String role, long[] counts, SourceLocation where) {
        if (counts == null || counts.length != comm.size()) {
            throw new CommException(where, String.format("%s on '%s': %s has %s entries for %d ranks", op,
                    comm.name(), role, counts == null ? "no" : String.valueOf(counts.length), comm.size()));
        }
        long total = 0;
        for (long c : counts) {
            if (c < 0) {
                throw new CommException(where, String.format("%s on '%s': %s %s has a negative count", op,
                        comm.name(), role, java.util.Arrays.toString(counts)));
            }
            total = Math.addExact(total, c);
        }
        return total;
    }

    /** {@code buf} must hold {@code count} elements of {@code dtype}; returns their size in bytes. */
    public static long buffer(Communicator comm, String op, String role, MemorySegment buf, DType dtype, long count,
                              SourceLocation where) {
        long bytes = bytes(comm, op, dtype, count, where);
        holds(comm, op, role, buf, dtype, count, bytes, where);
        return bytes;
    }

    /** The size in bytes of {@code count} elements of {@code dtype}, which must be a valid count. */
    public static long bytes(Communicator comm, String op, DType dtype, long count, SourceLocation where) {
        if (count < 0) {
            throw new CommException(where, String.format("%s on '%s': negative count %d", op, comm.name(), count));
        }
        try {
            return Math.multiplyExact(count, dtype.byteSize());
        } catch (ArithmeticException e) {
            throw new CommException(where, String.format("%s on '%s': count %d is too large", op, comm.name(), count));
        }
    }

    /** {@code buf} must hold {@code bytes} bytes, {@code count} elements of {@code dtype}. */
    public static void holds(Communicator comm, String op, String role, MemorySegment buf, DType dtype, long count,
                             long bytes, SourceLocation where) {
        if (buf == null) {
            throw new CommException(where, String.format("%s on '%s': %s buffer is null", op, comm.name(), role));
        }
        if (buf.byteSize() < bytes) {
            throw new CommException(where, String.format(
                    "%s on '%s': %s buffer of %d bytes cannot hold %d x %s (%d bytes)",
                    op, comm.name(), role, buf.byteSize(), count, dtype.specName(), bytes));
        }
    }

    public static void reduceOp(Communicator comm, String op, RuntimeReduceOp reduceOp, DType dtype, SourceLocation where) {
        if (reduceOp == null) {
            throw new CommException(where, String.format("%s on '%s': reduce op is null", op, comm.name()));
        }
        if (!reduceOp.supports(dtype)) {
            throw new CommException(where, String.format("%s on '%s': %s is not defined on %s",
                    op, comm.name(), reduceOp.name(), dtype.specName()));
        }
    }
}
