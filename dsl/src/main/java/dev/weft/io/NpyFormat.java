package dev.weft.io;

import dev.weft.DType;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NumPy's {@code .npy} header (format versions 1.0, 2.0 and 3.0): the magic string, the version, the header's
 * length, and a Python dict literal with {@code descr}, {@code fortran_order} and {@code shape}, padded with spaces
 * so that the data starts at a multiple of 64 bytes.
 *
 * @param dtype        Weft's element type
 * @param order        the data's byte order
 * @param fortranOrder whether the data is in column-major order
 * @param shape        the array's shape
 * @param dataOffset   where the data starts in the file
 */
record NpyFormat(DType dtype, ByteOrder order, boolean fortranOrder, long[] shape, int dataOffset) {
    static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final int ALIGNMENT = 64;
    private static final Pattern DESCR = Pattern.compile("'descr'\\s*:\\s*'([<>|=])([a-z])(\\d+)'");
    private static final Pattern FORTRAN = Pattern.compile("'fortran_order'\\s*:\\s*(True|False)");
    private static final Pattern SHAPE = Pattern.compile("'shape'\\s*:\\s*\\(([^)]*)\\)");

    /** The number of elements. */
    long size() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** The header of an array of {@code dtype} and {@code shape}, little-endian, C order, as NumPy writes it. */
    static byte[] header(DType dtype, long[] shape) {
        StringBuilder dims = new StringBuilder();
        for (long d : shape) {
            dims.append(d).append(", ");
        }
        if (shape.length > 1) {
            dims.setLength(dims.length() - 2);
        } else if (shape.length == 1) {
            dims.setLength(dims.length() - 1);
        }
        String dict = "{'descr': '" + descr(dtype) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
        byte[] text = dict.getBytes(StandardCharsets.ISO_8859_1);
        boolean wide = text.length + 1 + 10 > 0xffff;
        int prefix = wide ? 12 : 10;
        int total = (prefix + text.length + 1 + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        int headerLength = total - prefix;
        byte[] out = new byte[total];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        out[6] = (byte) (wide ? 2 : 1);
        out[7] = 0;
        if (wide) {
            for (int i = 0; i < 4; i++) {
                out[8 + i] = (byte) (headerLength >>> (8 * i));
            }
        } else {
            out[8] = (byte) headerLength;
            out[9] = (byte) (headerLength >>> 8);
        }
        System.arraycopy(text, 0, out, prefix, text.length);
        for (int i = prefix + text.length; i < total - 1; i++) {
            out[i] = ' ';
        }
        out[total - 1] = '\n';
        return out;
    }

    /** NumPy's type string of {@code dtype}: {@code <f4}, {@code <f8}, {@code <i4}, {@code <i8}, {@code |b1}. */
    static String descr(DType dtype) {
        return switch (dtype) {
            case F32 -> "<f4";
            case F64 -> "<f8";
            case I32 -> "<i4";
            case I64 -> "<i8";
            case BOOL -> "|b1";
        };
    }

    /**
     * Parses the header at the start of {@code bytes} (at least its first 12 bytes, or all of them).
     *
     * @throws IllegalArgumentException saying what is wrong: not a {@code .npy} file, an unknown version, a
     *                                  truncated or malformed header, a type Weft has no dtype for
     */
    static NpyFormat parse(byte[] bytes, long fileSize) {
        if (bytes.length < 10) {
            throw new IllegalArgumentException("too short for a .npy file (" + fileSize + " bytes)");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (bytes[i] != MAGIC[i]) {
                throw new IllegalArgumentException("not a .npy file (it does not start with \\x93NUMPY)");
            }
        }
        int major = bytes[6] & 0xff;
        int prefix;
        long length;
        if (major == 1) {
            prefix = 10;
            length = (bytes[8] & 0xff) | (bytes[9] & 0xff) << 8;
        } else if (major == 2 || major == 3) {
            if (bytes.length < 12) {
                throw new IllegalArgumentException("truncated header");
            }
            prefix = 12;
            length = (bytes[8] & 0xffL) | (bytes[9] & 0xffL) << 8 | (bytes[10] & 0xffL) << 16
                    | (bytes[11] & 0xffL) << 24;
        } else {
            throw new IllegalArgumentException("unknown .npy format version " + major + "." + (bytes[7] & 0xff));
        }
        if (prefix + length > bytes.length) {
            throw new IllegalArgumentException("truncated header: it claims " + length + " bytes, the file has "
                    + (fileSize - prefix) + " after the prefix");
        }
        String dict = new String(bytes, prefix, (int) length, major == 3 ? StandardCharsets.UTF_8
                : StandardCharsets.ISO_8859_1);
        Matcher d = DESCR.matcher(dict), f = FORTRAN.matcher(dict), s = SHAPE.matcher(dict);
        if (!d.find() || !f.find() || !s.find()) {
            throw new IllegalArgumentException("malformed header " + dict.strip()
                    + " (a structured or object array?)");
        }
        DType dtype = dtype(d.group(2), Integer.parseInt(d.group(3)), d.group(1) + d.group(2) + d.group(3));
        ByteOrder order = d.group(1).equals(">") ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        List<Long> dims = new ArrayList<>();
        for (String part : s.group(1).split(",")) {
            if (!part.isBlank()) {
                long v;
                try {
                    v = Long.parseLong(part.strip().replace("L", ""));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("malformed shape (" + s.group(1) + ")");
                }
                if (v < 0) {
                    throw new IllegalArgumentException("negative dimension in shape (" + s.group(1) + ")");
                }
                dims.add(v);
            }
        }
        long[] shape = dims.stream().mapToLong(Long::longValue).toArray();
        return new NpyFormat(dtype, order, f.group(1).equals("True"), shape, (int) (prefix + length));
    }

    private static DType dtype(String kind, int bytes, String descr) {
        DType t = switch (kind + bytes) {
            case "f4" -> DType.F32;
            case "f8" -> DType.F64;
            case "i4" -> DType.I32;
            case "i8" -> DType.I64;
            case "b1" -> DType.BOOL;
            default -> null;
        };
        if (t == null) {
            throw new IllegalArgumentException("its dtype " + descr + " has no Weft dtype (f4, f8, i4, i8 and b1"
                    + " do; convert it with astype first)");
        }
        return t;
    }
}
