package dev.weft.backends.cpu.exec;

import dev.weft.spi.Setting;
import static java.lang.constant.ConstantDescs.CD_double;
import static java.lang.constant.ConstantDescs.CD_float;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.classfile.TypeKind;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Emits the vector main loop of a generated fused loop ({@link FusedLoopGenerator}): over
 * {@code [from, from + (to - from) / L * L)} it loads {@code L} elements of each full-size input with
 * {@code DoubleVector.fromMemorySegment} (or {@code FloatVector} for f32), computes every node lane-wise and stores
 * each result with {@code intoMemorySegment}; the generator's scalar loop then runs the tail. C2 in JDK 25 does not
 * vectorize a loop that loads from one native segment and stores to another (it cannot rule out aliasing), so the
 * scalar loop runs one element per iteration; this loop runs {@code L} (4 doubles, 8 floats in 256 bits). Rank-0
 * inputs are broadcast once before the loop, which is skipped whole for a range shorter than {@code L}.
 *
 * <p>Only fusions whose results are bit-identical to the scalar loop qualify: every node f64 (or every node f32),
 * every op one of add, subtract, multiply, divide, negate, abs, sqrt, minimum, maximum (IEEE-exact lane-wise, and
 * {@code min}/{@code max} follow {@link Math#min}/{@link Math#max} for NaN and -0.0), with no contraction of a
 * multiply and an add. Every full-size input is read, and every result written, at the loop index, so a block of
 * {@code L} elements is read whole before any of it is written, as {@link FusedLoop} requires.
 *
 * <p>The species is {@code SPECIES_256} read with {@code getstatic}, so C2 sees a constant and intrinsifies the
 * operations (a species it cannot see as a constant makes every op allocate). The Vector API is an incubator
 * module: vector loops are emitted only when {@code jdk.incubator.vector} is in the boot layer
 * ({@code --add-modules jdk.incubator.vector}) and the preferred species has at least 256 bits; otherwise, or with
 * {@code -Dweft.vector=false}, every loop is scalar until it becomes native code ({@link NativeLoops}). A missing
 * module is said once on stderr when there is no C compiler either, other reasons with {@code WEFT_DEBUG=1}. This
 * class refers to the vector classes only by name, so it loads without the module.
 */
final class VectorLoopEmitter {
    private static final String MODULE = "jdk.incubator.vector";
    private static final int BITS = 256;
    /** True when loops may be vectorized in this JVM. */
    static final boolean AVAILABLE = detect();

    private static final ClassDesc CD_SEGMENT = ClassDesc.of(MemorySegment.class.getName());
    private static final ClassDesc CD_ORDER = ClassDesc.of(ByteOrder.class.getName());
    private static final ClassDesc CD_VECTOR = ClassDesc.of(MODULE + ".Vector");
    private static final ClassDesc CD_SPECIES = ClassDesc.of(MODULE + ".VectorSpecies");
    private static final MethodTypeDesc NATIVE_ORDER = MethodTypeDesc.of(CD_ORDER);

    private VectorLoopEmitter() {
    }

    /** True if {@code spec}'s loop gets a vector main loop in this JVM. */
    static boolean applies(FusedLoopSpec spec) {
        return Setting.VECTOR.choice().equals("true") && AVAILABLE && qualifies(spec);
    }

    /** True if {@code spec} is all f64 or all f32 and every op is one with a bit-identical vector method. */
    static boolean qualifies(FusedLoopSpec spec) {
        if (spec.nodes().isEmpty()) {
            return false;
        }
        DType t = spec.nodes().getFirst().dtype();
        if (t != DType.F64 && t != DType.F32) {
            return false;
        }
        for (FusedLoopSpec.Node node : spec.nodes()) {
            if (node.dtype() != t || node instanceof FusedLoopSpec.Apply a
                    && (a.operand() != t || method(a.op()) == null)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Emits the vector loop of {@code spec}, which {@link #applies}, into {@code code}: {@code inputSegment} and
     * {@code resultSegment} are the locals holding each element node's and each result's segment,
     * {@code inputOffset} and {@code resultOffset} the long locals holding the byte offset of element 0 in them,
     * {@code scalar} those holding each rank-0 node's value (read already), {@code from} and {@code to} the
     * range's bounds. Returns a new long local holding the first index the scalar loop must run from.
     */
    static int emit(FusedLoopSpec spec, CodeBuilder code, int[] inputSegment, int[] inputOffset,
                    int[] resultSegment, int[] resultOffset, int[] scalar, int from, int to) {
        DType t = spec.nodes().getFirst().dtype();
        boolean f64 = t == DType.F64;
        ClassDesc vector = ClassDesc.of(MODULE + (f64 ? ".DoubleVector" : ".FloatVector"));
        ClassDesc element = f64 ? CD_double : CD_float;
        long lanes = BITS / 8 / t.byteSize();
        List<FusedLoopSpec.Node> nodes = spec.nodes();
        int[] local = new int[nodes.size()];
        int bound = code.allocateLocal(TypeKind.LONG);
        int i = code.allocateLocal(TypeKind.LONG);
        code.lload(to).lload(from).lsub().loadConstant(-lanes).land().lload(from).ladd().lstore(bound);
        Label test = code.newLabel();
        Label body = code.newLabel();
        Label done = code.newLabel();
        // a range shorter than a vector touches no vector class: no broadcasts for a loop over a few elements
        code.lload(bound).lload(from).lcmp().ifle(done);
        for (int k = 0; k < nodes.size(); k++) {
            local[k] = code.allocateLocal(TypeKind.REFERENCE);
            if (nodes.get(k) instanceof FusedLoopSpec.Scalar) {
                species(code, vector);
                code.loadLocal(f64 ? TypeKind.DOUBLE : TypeKind.FLOAT, scalar[k])
                        .invokestatic(vector, "broadcast", MethodTypeDesc.of(vector, CD_SPECIES, element))
                        .astore(local[k]);
            }
        }
        code.lload(from).lstore(i).goto_(test).labelBinding(body);
        for (int k = 0; k < nodes.size(); k++) {
            switch (nodes.get(k)) {
                case FusedLoopSpec.Element e -> {
                    species(code, vector);
                    code.aload(inputSegment[k]);
                    byteOffsetAndOrder(code, inputOffset[k], i, t);
                    code.invokestatic(vector, "fromMemorySegment",
                                    MethodTypeDesc.of(vector, CD_SPECIES, CD_SEGMENT, CD_long, CD_ORDER))
                            .astore(local[k]);
                }
                case FusedLoopSpec.Scalar s -> {
                    // broadcast before the loop
                }
                case FusedLoopSpec.Apply a -> {
                    for (int arg : a.args()) {
                        code.aload(local[arg]);
                    }
                    MethodTypeDesc type = a.args().size() == 1 ? MethodTypeDesc.of(vector)
                            : MethodTypeDesc.of(vector, CD_VECTOR);
                    code.invokevirtual(vector, method(a.op()), type).astore(local[k]);
                }
            }
        }
        for (int r = 0; r < resultSegment.length; r++) {
            code.aload(local[spec.results().get(r)]).aload(resultSegment[r]);
            byteOffsetAndOrder(code, resultOffset[r], i, t);
            code.invokevirtual(vector, "intoMemorySegment",
                    MethodTypeDesc.of(CD_void, CD_SEGMENT, CD_long, CD_ORDER));
        }
        code.lload(i).loadConstant(lanes).ladd().lstore(i);
        code.labelBinding(test).lload(i).lload(bound).lcmp().iflt(body);
        code.labelBinding(done);
        return bound;
    }

    /**
     * The lane-wise Vector API method of {@code op}, by name, when it equals the scalar kernel bit for bit; null when
     * the op has none, which keeps a fusion holding it scalar.
     */
    static String method(ElementwiseOp op) {
        return switch (op) {
            case ADD -> "add";
            case SUB -> "sub";
            case MUL -> "mul";
            case DIV -> "div";
            case NEG -> "neg";
            case ABS -> "abs";
            case SQRT -> "sqrt";
            case MIN -> "min";
            case MAX -> "max";
            case POW, REM, ATAN2, EXP, LOG, RSQRT, TANH, SIN, COS, LT, LE, GT, GE, EQ, NE, SELECT, CONVERT -> null;
        };
    }

    /** Pushes {@code SPECIES_256} of {@code vector}, a constant to C2. */
    private static void species(CodeBuilder code, ClassDesc vector) {
        code.getstatic(vector, "SPECIES_" + BITS, CD_SPECIES);
    }

    /**
     * Pushes the byte offset of element {@code i} (a long local) in a segment whose element 0 is at the byte offset
     * the long local {@code offset} holds, and the native byte order.
     */
    private static void byteOffsetAndOrder(CodeBuilder code, int offset, int i, DType t) {
        code.lload(offset).lload(i).loadConstant((long) t.byteSize()).lmul().ladd()
                .invokestatic(CD_ORDER, "nativeOrder", NATIVE_ORDER);
    }

    private static boolean detect() {
        String why = null;
        if ("false".equalsIgnoreCase(Setting.VECTOR.text())) { // checked where used: a static initialiser must not throw
            why = "-Dweft.vector=false";
        } else if (ModuleLayer.boot().findModule(MODULE).isEmpty()) {
            if (NativeLoops.hasCompiler()) {
                // bin/weft's choice where a C compiler makes the loops native code, which do what vector loops do
                why = "no " + MODULE + " (each runs so until it becomes native code)";
            } else {
                // 2-3x on fused elementwise chains, and no native loops either: say so without WEFT_DEBUG
                System.err.println("weft: the JVM runs without " + MODULE + " and without a C compiler, so fused"
                        + " loops are scalar (2-3x slower on elementwise chains); run java with --add-modules " + MODULE
                        + " or install cc");
                return false;
            }
        } else {
            try {
                Object species = Class.forName(MODULE + ".DoubleVector").getField("SPECIES_PREFERRED").get(null);
                int bits = (int) Class.forName(MODULE + ".VectorSpecies").getMethod("vectorBitSize").invoke(species);
                if (bits < BITS) {
                    why = "the preferred vector size is " + bits + " bits, under " + BITS;
                }
            } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
                why = "the Vector API cannot be queried: " + e;
            }
        }
        if (why != null && Setting.DEBUG.on()) {
            System.err.println("weft: fused loops are scalar: " + why);
        }
        return why == null;
    }
}
