package dev.weft.tracer;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.graph.ConstantParameters;
import dev.weft.graph.Graph;
import dev.weft.graph.GraphComparison;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.ToIntFunction;

/**
 * The programs of one call key whose {@code double}/{@code float} arguments are traced scalars (see
 * {@link dev.weft.Compile}). Each program is a trace with the constants that equal a scalar's value turned into reads
 * of it ({@link ConstantParameters}), compiled once; a call with values not seen before traces the body again,
 * turns the same constants of the new trace into reads, and runs the program that new trace equals
 * ({@link GraphComparison}), compiling one only when none does. So a call always runs the program of its own
 * trace, and only a trace, never a compile, is paid for a value used only through Weft's operations.
 *
 * <p>Not shared between threads that run at once: each fake rank has its own call key, hence its own family; calls
 * on one key from several threads take turns.
 */
final class ScalarFamily implements Executable {
    /** Values remembered per family: a value seen again runs without a trace (a schedule that repeats values). */
    private static final int REMEMBERED = 64;

    /** One trace of the body: the graph and the result's tree structure ({@code null}: not a tree). */
    record Trace(Graph graph, Trees.Structure result) {
    }

    /** Traces the body with these values of the scalar arguments. */
    @FunctionalInterface
    interface Tracing {
        Trace trace(double[] values);
    }

    /** Compiles a parameterized trace into what the gate runs (its inputs: the tensors, then one per scalar). */
    @FunctionalInterface
    interface Compiling {
        Executable compile(Graph parameterized, Trees.Structure result, double[] values,
                           Optional<SourceLocation> changedAt);
    }

    /** A compiled program: the trace it was made from, which scalar each of its constants reads, the executable. */
    private record Program(Trace trace, ToIntFunction<Tensor> reads, Executable executable) {
    }

    private final List<DType> dtypes;
    private final Tracing tracing;
    private final Compiling compiling;
    private final List<Program> programs = new ArrayList<>();
    private final Map<List<Double>, Program> seen = new LinkedHashMap<>(16, 0.75f, true);

    /** The family of a call with scalar arguments of {@code dtypes} (F64 or F32), first called with {@code values}. */
    ScalarFamily(List<DType> dtypes, Tracing tracing, Compiling compiling) {
        this.dtypes = List.copyOf(dtypes);
        this.tracing = tracing;
        this.compiling = compiling;
    }

    /** The program for {@code values}: tracing the body again unless they were seen, compiling only when needed. */
    synchronized Executable select(double[] values) {
        List<Double> key = Arrays.stream(values).boxed().toList();
        Program p = seen.get(key);
        if (p == null) {
            p = programFor(values);
            seen.put(key, p);
            if (seen.size() > REMEMBERED) {
                Iterator<List<Double>> oldest = seen.keySet().iterator();
                oldest.next();
                oldest.remove();
            }
        }
        return p.executable;
    }

    /** The scalar inputs for {@code values}, appended to the tensor inputs of the program {@link #select} gives. */
    List<Tensor> inputs(double[] values) {
        List<Tensor> out = new ArrayList<>(values.length);
        for (int i = 0; i < values.length; i++) {
            out.add(Tensor.scalar(dtypes.get(i), values[i]));
        }
        return out;
    }

    /**
     * The program whose trace equals this one's once the constants each reads are put aside: a constant counts as
     * the same where both read the same scalar, or neither reads one and they hold the same bytes. That is the
     * comparison of the two parameterized graphs, without building the new one.
     */
    private Program programFor(double[] values) {
        Trace raw = tracing.trace(values);
        ToIntFunction<Tensor> reads = choice(values);
        Optional<SourceLocation> firstChange = Optional.empty();
        for (Program p : programs) {
            Optional<SourceLocation> d = GraphComparison.firstDifference(p.trace.graph(), raw.graph(), (c, e) -> {
                int k = p.reads.applyAsInt(c), j = reads.applyAsInt(e);
                return k >= 0 || j >= 0 ? k == j : GraphComparison.sameContents(c, e);
            });
            if (d.isEmpty() && Objects.equals(p.trace.result(), raw.result())) {
                return p;
            }
            if (firstChange.isEmpty()) {
                firstChange = Optional.of(d.orElse(SourceLocation.UNKNOWN));
            }
        }
        Graph g = ConstantParameters.parameterize(raw.graph(), avals(), reads);
        Program p = new Program(raw, reads, compiling.compile(g, raw.result(), values, firstChange));
        if (programs.size() >= CompileCache.limit()) {
            Program oldest = programs.removeFirst();
            seen.values().removeIf(q -> q == oldest);
            oldest.executable.close();
        }
        programs.add(p);
        return p;
    }

    private List<Aval> avals() {
        return dtypes.stream().map(t -> new Aval(t, Shape.of())).toList();
    }

    /**
     * Which scalar a constant reads: the first whose value, converted to the constant's dtype, every element of the
     * constant equals bit for bit. Only f32 and f64 constants: an integer or boolean constant that happens to equal
     * a value (0, 1) is far more often something else, and conversion to the narrow floats rounds.
     */
    private ToIntFunction<Tensor> choice(double[] values) {
        return c -> {
            DType t = c.dtype();
            if (t != DType.F64 && t != DType.F32 || c.size() == 0) {
                return -1;
            }
            MemorySegment data = TensorAccess.data(c);
            for (int i = 0; i < values.length; i++) {
                if (t == DType.F64 ? allEqual(data, Double.doubleToRawLongBits(values[i]), c.size())
                        : allEqual(data, Float.floatToRawIntBits((float) values[i]), c.size())) {
                    return i;
                }
            }
            return -1;
        };
    }

    private static boolean allEqual(MemorySegment s, long bits, long n) {
        for (long k = 0; k < n; k++) {
            if (s.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, k) != bits) {
                return false;
            }
        }
        return true;
    }

    private static boolean allEqual(MemorySegment s, int bits, long n) {
        for (long k = 0; k < n; k++) {
            if (s.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, k) != bits) {
                return false;
            }
        }
        return true;
    }

    /** Not run directly: the gate runs the program {@link #select} gives. */
    @Override
    public List<Tensor> run(List<Tensor> args) {
        throw new IllegalStateException("a traced-scalar family runs through select");
    }

    @Override
    public synchronized void close() {
        programs.forEach(p -> p.executable.close());
        programs.clear();
        seen.clear();
    }
}
