package dev.weft.io;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.IntStream;

/**
 * NumPy's {@code .npy} files: {@code np.load} reads what {@link #save} writes, and {@link #load} reads what
 * {@code np.save} writes, for every Weft dtype ({@code f4 f8 i4 i8 b1}; either byte order; C or Fortran order). A
 * file is written whole or not at all: to a new file beside it, then renamed onto its name.
 */
public final class Npy {
    private Npy() {
    }

    /**
     * Writes {@code x} (an eager tensor) to {@code file} in NumPy's format, replacing the file.
     *
     * @throws TracedValueException naming the caller's line for a traced or sharded tensor (save it outside
     *                              {@code @Compile}; gather a sharded one first)
     * @throws WeftException        naming the caller's line and the file when it cannot be written
     */
    public static void save(Path file, Tensor x) {
        Args.notNull(file, Npy.class, "save", "file");
        Args.notNull(x, Npy.class, "save", "x");
        SourceLocation where = SourceLocation.capture();
        byte[] bytes = bytes(x, "Npy.save", where);
        try {
            writeAtomically(file, bytes);
        } catch (IOException e) {
            throw new WeftException(where, "Npy.save: cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the array in {@code file}.
     *
     * @throws WeftException naming the caller's line and the file when it cannot be read, is not a {@code .npy}
     *                       file, is truncated, or holds a type Weft has no dtype for
     */
    public static Tensor load(Path file) {
        Args.notNull(file, Npy.class, "load", "file");
        SourceLocation where = SourceLocation.capture();
        byte[] bytes;
        try {
            if (Files.size(file) > Integer.MAX_VALUE - 16) {
                throw new WeftException(where, "Npy.load: " + file + " is larger than the 2 GiB Weft reads at once");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new WeftException(where, "Npy.load: cannot read " + file + ": " + e.getMessage(), e);
        }
        return tensor(bytes, file.toString(), "Npy.load", where);
    }

    /** {@code x} as the bytes of a {@code .npy} file. */
    static byte[] bytes(Tensor x, String what, SourceLocation where) {
        MemorySegment data = TensorAccess.data(x);
        if (data == null) {
            throw new TracedValueException(where, what + ": " + TensorAccess.aval(x) + " is traced or sharded, so"
                    + " it has no values here; save it outside @Compile, and gather a sharded tensor first");
        }
        byte[] header = NpyFormat.header(x.dtype(), x.shape());
        long n = x.size() * x.dtype().byteSize();
        data = data.asSlice(0, n);
        if (header.length + n > Integer.MAX_VALUE - 16) {
            throw new WeftException(where, what + ": " + TensorAccess.aval(x) + " is larger than the 2 GiB Weft"
                    + " writes at once");
        }
        byte[] out = new byte[header.length + (int) n];
        System.arraycopy(header, 0, out, 0, header.length);
        // Weft's buffers are in the machine's order, NumPy's header says little-endian
        ByteBuffer body = ByteBuffer.wrap(out, header.length, (int) n).order(ByteOrder.LITTLE_ENDIAN);
        switch (x.dtype()) {
            case F32 -> body.asFloatBuffer().put(data.toArray(ValueLayout.JAVA_FLOAT));
            case F64 -> body.asDoubleBuffer().put(data.toArray(ValueLayout.JAVA_DOUBLE));
            case I32 -> body.asIntBuffer().put(data.toArray(ValueLayout.JAVA_INT));
            case I64 -> body.asLongBuffer().put(data.toArray(ValueLayout.JAVA_LONG));
            case BOOL -> body.put(data.toArray(ValueLayout.JAVA_BYTE));
        }
        return out;
    }

    /** The array in {@code bytes}, a {@code .npy} file called {@code name}. */
    static Tensor tensor(byte[] bytes, String name, String what, SourceLocation where) {
        NpyFormat f;
        long size;
        try {
            f = NpyFormat.parse(bytes, bytes.length);
            size = f.size();
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new WeftException(where, what + ": " + name + ": " + (e instanceof ArithmeticException
                    ? "its shape has more elements than a long holds" : e.getMessage()));
        }
        long need = size * f.dtype().byteSize();
        long have = bytes.length - (long) f.dataOffset();
        if (size > Integer.MAX_VALUE || need > have) {
            throw new WeftException(where, what + ": " + name + " is truncated: its header says "
                    + f.dtype().specName() + java.util.Arrays.toString(f.shape()) + ", " + need + " bytes of data,"
                    + " and it has " + have);
        }
        int n = (int) size;
        ByteBuffer body = ByteBuffer.wrap(bytes, f.dataOffset(), (int) need).order(f.order());
        long[] stored = f.fortranOrder() ? reversed(f.shape()) : f.shape();
        Tensor t = switch (f.dtype()) {
            case F32 -> {
                float[] a = new float[n];
                body.asFloatBuffer().get(a);
                yield Tensor.of(a, stored);
            }
            case F64 -> {
                double[] a = new double[n];
                body.asDoubleBuffer().get(a);
                yield Tensor.of(a, stored);
            }
            case I32 -> {
                int[] a = new int[n];
                body.asIntBuffer().get(a);
                yield Tensor.of(a, stored);
            }
            case I64 -> {
                long[] a = new long[n];
                body.asLongBuffer().get(a);
                yield Tensor.of(a, stored);
            }
            case BOOL -> {
                boolean[] a = new boolean[n];
                for (int i = 0; i < n; i++) {
                    a[i] = body.get() != 0;
                }
                yield Tensor.of(a, stored);
            }
        };
        if (stored.length == 0) {
            t = t.reshape();
        }
        if (f.fortranOrder() && stored.length > 1) {
            // column-major data is the row-major array of the reversed shape, transposed
            t = t.transpose(IntStream.range(0, stored.length).map(i -> stored.length - 1 - i).toArray());
        }
        return t;
    }

    private static long[] reversed(long[] shape) {
        long[] r = new long[shape.length];
        for (int i = 0; i < shape.length; i++) {
            r[i] = shape[shape.length - 1 - i];
        }
        return r;
    }

    /** Writes {@code bytes} to a new file beside {@code file}, then renames it onto {@code file}. */
    static void writeAtomically(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName() + ".", ".tmp");
        try {
            Files.write(tmp, bytes);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
