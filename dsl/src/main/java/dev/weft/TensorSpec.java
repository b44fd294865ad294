package dev.weft;

import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Stands for a tensor argument of a given dtype and shape when lowering without data ({@link Weft#lower}). */
public record TensorSpec(DType dtype, long[] shape) {
    private static final Pattern SPEC = Pattern.compile("(f32|f64|i32|i64|bool)\\[([0-9, ]*)]");

    /** @throws WeftException naming the line for a null dtype or shape, or a negative or too large shape */
    public TensorSpec {
        if (dtype == null || shape == null) {
            throw new WeftException(SourceLocation.capture(), "TensorSpec: the " + (dtype == null ? "dtype" : "shape")
                    + " is null");
        }
        shape = new Aval(dtype, Shape.of(shape)).shape().dims();
    }

    public static TensorSpec of(DType dtype, long... shape) {
        return new TensorSpec(dtype, shape);
    }

    /** Parses {@code f32[64,64]}, {@code i32[]} (a scalar) and the like. */
    public static TensorSpec parse(String spec) {
        Matcher m = SPEC.matcher(spec.trim());
        if (!m.matches()) {
            throw new WeftException(SourceLocation.capture(), "bad tensor spec '" + spec
                    + "' (expected like f32[64,64])");
        }
        String dims = m.group(2).trim();
        long[] shape = dims.isEmpty() ? new long[0]
                : Arrays.stream(dims.split(",")).map(String::trim).mapToLong(Long::parseLong).toArray();
        return new TensorSpec(DType.fromSpecName(m.group(1)), shape);
    }

    public Aval aval() {
        return new Aval(dtype, Shape.of(shape));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorSpec s && s.dtype == dtype && Arrays.equals(s.shape, shape);
    }

    @Override
    public int hashCode() {
        return dtype.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return aval().toString();
    }
}
