package dev.weft.backends.cpu.exec;

import static java.lang.constant.ConstantDescs.CD_Object;
import static java.lang.constant.ConstantDescs.CD_byte;
import static java.lang.constant.ConstantDescs.CD_double;
import static java.lang.constant.ConstantDescs.CD_float;
import static java.lang.constant.ConstantDescs.CD_int;
import static java.lang.constant.ConstantDescs.CD_long;
import static java.lang.constant.ConstantDescs.CD_void;
import static java.lang.constant.ConstantDescs.CLASS_INIT_NAME;
import static java.lang.constant.ConstantDescs.INIT_NAME;
import static java.lang.constant.ConstantDescs.MTD_void;

import dev.weft.DType;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.FloatMath;
import dev.weft.backends.cpu.kernels.FloatMathBlock;
import dev.weft.prim.ElementwiseOp;
import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Label;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.OperatorInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiles a {@link FusedLoopSpec} to a hidden class implementing {@link FusedLoop}: one counted {@code long}
 * loop whose body loads each full-size input element once, computes every node in a local and stores each result
 * once, through {@link MemorySegment#get}/{@code set} at the segment's offset plus the index times the element
 * size, with the unaligned layout constants, so C2 sees a plain indexed loop. Each op is the bytecode its kernel
 * in {@code kernels} compiles to (f32 transcendentals computed in double and rounded, integer division by
 * {@code idiv}/{@code ldiv}, integer power by {@link Elementwise#integerPower}), so results are bit-identical to the
 * eager kernels. {@code runRows} calls {@code run} once per row, a call bound statically. Classes are cached by
 * spec for the life of the JVM: one per distinct fusion structure.
 *
 * <p>A fusion holding f32 sine, cosine or exponential runs block by block instead ({@link BlockedLoopPlan}): its
 * element loops run over heap arrays, which C2 vectorizes (it does not vectorize these loops over native
 * segments), and those functions run as {@link FloatMathBlock} kernels, bit-identical to {@link FloatMath}.
 * Ranges shorter than {@value #BLOCKED_MIN} elements (short rows of a fusion with views) keep the single loop.
 *
 * <p>A fusion of f64 (or f32) add, subtract, multiply, divide, negate, abs, sqrt, minimum and maximum runs a
 * Vector API loop over the whole vectors of each range first and the scalar loop over the rest
 * ({@link VectorLoopEmitter}), when the JVM has the incubator module; a long range runs mostly scalar until that
 * loop is compiled ({@link VectorWarmUp}).
 */
final class FusedLoopGenerator {
    private static final Map<FusedLoopSpec, FusedLoop> CACHE = new ConcurrentHashMap<>();
    /** The generated classes with a vector main loop. */
    private static final Set<Class<?>> VECTORIZED = ConcurrentHashMap.newKeySet();

    private static final ClassDesc CD_SEGMENT = desc(MemorySegment.class);
    private static final ClassDesc CD_SEGMENTS = CD_SEGMENT.arrayType();
    private static final ClassDesc CD_LAYOUTS = desc(ValueLayout.class);
    private static final ClassDesc CD_MATH = desc(Math.class);
    private static final ClassDesc CD_ELEMENTWISE = desc(Elementwise.class);
    private static final ClassDesc CD_FLOAT_MATH = desc(FloatMath.class);
    private static final ClassDesc CD_FLOAT_MATH_BLOCK = desc(FloatMathBlock.class);
    private static final ClassDesc CD_FLOAT_ARRAY = CD_float.arrayType();
    private static final MethodTypeDesc COPY_IN = MethodTypeDesc.of(CD_void, CD_SEGMENT, CD_LAYOUTS, CD_long,
            CD_Object, CD_int, CD_int);
    private static final MethodTypeDesc COPY_OUT = MethodTypeDesc.of(CD_void, CD_Object, CD_int, CD_SEGMENT,
            CD_LAYOUTS, CD_long, CD_int);
    private static final MethodTypeDesc KERNEL = MethodTypeDesc.of(CD_void, CD_FLOAT_ARRAY, CD_FLOAT_ARRAY, CD_int);
    private static final ClassDesc CD_BLOCK_SCRATCH = desc(BlockScratch.class);
    private static final ClassDesc CD_DTYPE = desc(DType.class);
    private static final MethodTypeDesc SCRATCH_ARRAY = MethodTypeDesc.of(CD_Object, CD_DTYPE, CD_int);
    private static final ClassDesc CD_OFFSETS = CD_long.arrayType();
    /** The type of {@link FusedLoop#run} and of a vectorized loop's two loops ({@link VectorWarmUp.Paths}). */
    static final MethodTypeDesc RUN = MethodTypeDesc.of(CD_void, CD_SEGMENTS, CD_OFFSETS, CD_SEGMENTS,
            CD_OFFSETS, CD_long, CD_long);
    private static final MethodTypeDesc RUN_ROWS = MethodTypeDesc.of(CD_void, CD_SEGMENTS, CD_OFFSETS, CD_OFFSETS,
            CD_SEGMENTS, CD_OFFSETS, CD_OFFSETS, CD_long, CD_long, CD_long);
    private static final MethodTypeDesc D_D = MethodTypeDesc.of(CD_double, CD_double);
    private static final MethodTypeDesc F_F = MethodTypeDesc.of(CD_float, CD_float);
    private static final MethodTypeDesc DD_D = MethodTypeDesc.of(CD_double, CD_double, CD_double);
    private static final MethodTypeDesc JJ_J = MethodTypeDesc.of(CD_long, CD_long, CD_long);

    /** Locals of {@code run}: this, inputs, their offsets, results, their offsets, from, to; generated ones follow. */
    private static final int INPUTS = 1;
    private static final int INPUT_OFFSETS = 2;
    private static final int RESULTS = 3;
    private static final int RESULT_OFFSETS = 4;
    private static final int FROM = 5;
    private static final int TO = 7;

    /**
     * Shortest range a blocked loop runs in blocks: below it the copies and the kernels' range checks cost more
     * than SIMD saves (on benchmark case 1 both ways cost the same at 32 elements).
     */
    private static final long BLOCKED_MIN = 32;
    private static final String PER_ELEMENT = "perElement";
    private static final ClassDesc CD_WARM_UP = desc(VectorWarmUp.class);
    static final ClassDesc CD_PATHS = desc(VectorWarmUp.Paths.class);
    private static final MethodTypeDesc WARM_UP_RUN = MethodTypeDesc.of(CD_void, CD_PATHS, CD_SEGMENTS, CD_OFFSETS,
            CD_SEGMENTS, CD_OFFSETS, CD_long, CD_long);
    /** The static field of a vectorized loop class holding its {@link VectorWarmUp}, and its two loops. */
    private static final String WARM_UP = "WARM_UP";
    private static final String VECTOR = "vector";
    static final String SCALAR = "scalar";
    private static final String PER_BLOCK = "perBlock";

    private FusedLoopGenerator() {
    }

    /** The loop of {@code spec}, generated on first request. */
    static FusedLoop loop(FusedLoopSpec spec) {
        return CACHE.computeIfAbsent(spec, FusedLoopGenerator::define);
    }

    /** True if {@code loop} runs a vector main loop ({@link VectorLoopEmitter}) before its scalar one. */
    static boolean isVectorized(FusedLoop loop) {
        return VECTORIZED.contains(loop.getClass());
    }

    private static FusedLoop define(FusedLoopSpec spec) {
        ClassDesc self = ClassDesc.of(FusedLoop.class.getPackageName(), "GeneratedFusedLoop");
        Optional<BlockedLoopPlan> plan = BlockedLoopPlan.of(spec);
        boolean vector = plan.isEmpty() && VectorLoopEmitter.applies(spec);
        byte[] bytes = ClassFile.of().build(self, cb -> {
            cb.withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                    .withInterfaceSymbols(vector ? List.of(desc(FusedLoop.class), CD_PATHS)
                            : List.of(desc(FusedLoop.class)))
                    .withMethodBody(INIT_NAME, MTD_void, ClassFile.ACC_PUBLIC, code -> code
                            .aload(0).invokespecial(CD_Object, INIT_NAME, MTD_void).return_())
                    .withMethodBody("runRows", RUN_ROWS, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                            code -> runRows(self, code));
            if (vector) {
                cb.withField(WARM_UP, CD_WARM_UP, ClassFile.ACC_PRIVATE | ClassFile.ACC_STATIC | ClassFile.ACC_FINAL)
                        .withMethodBody(CLASS_INIT_NAME, MTD_void, ClassFile.ACC_STATIC, code -> code
                                .new_(CD_WARM_UP).dup().invokespecial(CD_WARM_UP, INIT_NAME, MTD_void)
                                .putstatic(self, WARM_UP, CD_WARM_UP).return_())
                        .withMethodBody("run", RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                                code -> warmUpOrVector(self, code))
                        .withMethodBody(VECTOR, RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                                code -> new Body(spec, code).emit(true))
                        .withMethodBody(SCALAR, RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                                code -> new Body(spec, code).emit(false));
                return;
            }
            if (plan.isEmpty()) {
                cb.withMethodBody("run", RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL,
                        code -> new Body(spec, code).emit(false));
                return;
            }
            cb.withMethodBody("run", RUN, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL, code -> dispatch(self, code))
                    .withMethodBody(PER_ELEMENT, RUN, ClassFile.ACC_PRIVATE, code -> new Body(spec, code).emit(false))
                    .withMethodBody(PER_BLOCK, RUN, ClassFile.ACC_PRIVATE,
                            code -> new Body(spec, code).emitBlocked(plan.get()));
        });
        try {
            MethodHandles.Lookup hidden = MethodHandles.lookup().defineHiddenClass(bytes, true);
            FusedLoop loop = (FusedLoop) hidden.findConstructor(hidden.lookupClass(),
                    MethodType.methodType(void.class)).invoke();
            if (vector) {
                VECTORIZED.add(loop.getClass());
            }
            return loop;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot define the loop of " + spec, e);
        }
    }

    /**
     * {@code run} of a vectorized loop: the vector loop over a range shorter than {@link VectorWarmUp#vectorBelow}
     * (every range once the vector loop is ready), otherwise the warm-up's phase.
     */
    private static void warmUpOrVector(ClassDesc self, CodeBuilder code) {
        Label whole = code.newLabel();
        code.lload(TO).lload(FROM).lsub().getstatic(self, WARM_UP, CD_WARM_UP)
                .getfield(CD_WARM_UP, "vectorBelow", CD_long).lcmp().iflt(whole);
        code.getstatic(self, WARM_UP, CD_WARM_UP).aload(0).aload(INPUTS).aload(INPUT_OFFSETS).aload(RESULTS)
                .aload(RESULT_OFFSETS).lload(FROM).lload(TO).invokevirtual(CD_WARM_UP, "run", WARM_UP_RUN)
                .return_();
        code.labelBinding(whole);
        forward(code).invokevirtual(self, VECTOR, RUN).return_();
    }

    /** {@code run} of a blocked loop: ranges shorter than {@value #BLOCKED_MIN} run element by element. */
    private static void dispatch(ClassDesc self, CodeBuilder code) {
        Label blocked = code.newLabel();
        code.lload(TO).lload(FROM).lsub().loadConstant(BLOCKED_MIN).lcmp().ifge(blocked);
        forward(code).invokevirtual(self, PER_ELEMENT, RUN).return_();
        code.labelBinding(blocked);
        forward(code).invokevirtual(self, PER_BLOCK, RUN).return_();
    }

    /**
     * {@code runRows}: {@code run} once per row, a call C2 binds statically (this class is final), then the
     * offsets advanced by the row strides.
     */
    private static void runRows(ClassDesc self, CodeBuilder code) {
        int in = 1, inOffsets = 2, inStrides = 3, out = 4, outOffsets = 5, outStrides = 6, rows = 7, from = 9,
                to = 11;
        int row = code.allocateLocal(TypeKind.LONG);
        Label test = code.newLabel();
        Label body = code.newLabel();
        code.lconst_0().lstore(row).goto_(test).labelBinding(body);
        code.aload(0).aload(in).aload(inOffsets).aload(out).aload(outOffsets).lload(from).lload(to)
                .invokevirtual(self, "run", RUN);
        advance(code, inOffsets, inStrides);
        advance(code, outOffsets, outStrides);
        code.lload(row).lconst_1().ladd().lstore(row);
        code.labelBinding(test).lload(row).lload(rows).lcmp().iflt(body);
        code.return_();
    }

    /** Adds each entry of the long array in local {@code strides} to that of the long array in {@code offsets}. */
    private static void advance(CodeBuilder code, int offsets, int strides) {
        int i = code.allocateLocal(TypeKind.INT);
        Label test = code.newLabel();
        Label body = code.newLabel();
        code.iconst_0().istore(i).goto_(test).labelBinding(body);
        code.aload(offsets).iload(i).aload(offsets).iload(i).laload().aload(strides).iload(i).laload().ladd()
                .lastore();
        code.iinc(i, 1);
        code.labelBinding(test).iload(i).aload(offsets).arraylength().if_icmplt(body);
    }

    /** Pushes this and every argument of {@code run}. */
    private static CodeBuilder forward(CodeBuilder code) {
        return code.aload(0).aload(INPUTS).aload(INPUT_OFFSETS).aload(RESULTS).aload(RESULT_OFFSETS).lload(FROM)
                .lload(TO);
    }

    private static ClassDesc desc(Class<?> c) {
        return c.describeConstable().orElseThrow();
    }

    /** Emission of one {@code run} method. */
    private static final class Body {
        private final FusedLoopSpec spec;
        private final CodeBuilder code;
        /** The local holding each node's value. */
        private final int[] local;
        /** The locals holding the segment and byte offset of each {@link FusedLoopSpec.Element} node. */
        private final int[] inputSegment;
        private final int[] inputOffset;
        private final int[] resultSegment;
        private final int[] resultOffset;

        Body(FusedLoopSpec spec, CodeBuilder code) {
            this.spec = spec;
            this.code = code;
            this.local = new int[spec.nodes().size()];
            this.inputSegment = new int[spec.nodes().size()];
            this.inputOffset = new int[spec.nodes().size()];
            this.resultSegment = new int[spec.results().size()];
            this.resultOffset = new int[spec.results().size()];
        }

        /** Allocates the node locals and segment and offset locals, and reads the rank-0 inputs. */
        private void prologue() {
            List<FusedLoopSpec.Node> nodes = spec.nodes();
            for (int k = 0; k < nodes.size(); k++) {
                local[k] = code.allocateLocal(kind(nodes.get(k).dtype()));
                if (nodes.get(k) instanceof FusedLoopSpec.Element e) {
                    inputSegment[k] = segmentLocal(INPUTS, e.input());
                    inputOffset[k] = offsetLocal(INPUT_OFFSETS, e.input());
                } else if (nodes.get(k) instanceof FusedLoopSpec.Scalar s) {
                    code.aload(INPUTS).loadConstant(s.input()).aaload();
                    load(s.dtype(), () -> code.lconst_0());
                    code.storeLocal(kind(s.dtype()), local[k]);
                }
            }
            for (int r = 0; r < resultSegment.length; r++) {
                resultSegment[r] = segmentLocal(RESULTS, r);
                resultOffset[r] = offsetLocal(RESULT_OFFSETS, r);
            }
        }

        /** One loop over the elements, each node in a local; after a vector loop if {@code vector}. */
        void emit(boolean vector) {
            prologue();
            int start = vector ? VectorLoopEmitter.emit(spec, code, inputSegment, inputOffset, resultSegment,
                    resultOffset, local, FROM, TO) : FROM;
            List<FusedLoopSpec.Node> nodes = spec.nodes();
            int i = code.allocateLocal(TypeKind.LONG);
            Label test = code.newLabel();
            Label body = code.newLabel();
            code.lload(start).lstore(i).goto_(test).labelBinding(body);
            for (int k = 0; k < nodes.size(); k++) {
                switch (nodes.get(k)) {
                    case FusedLoopSpec.Element e -> {
                        DType t = e.dtype();
                        code.aload(inputSegment[k]);
                        layout(t);
                        byteOffset(inputOffset[k], i, t);
                        code.invokeinterface(CD_SEGMENT, "get", MethodTypeDesc.of(valueDesc(t), layoutDesc(t),
                                CD_long));
                        code.storeLocal(kind(t), local[k]);
                    }
                    case FusedLoopSpec.Scalar s -> {
                        // read before the loop
                    }
                    case FusedLoopSpec.Apply a -> {
                        apply(a);
                        code.storeLocal(kind(a.dtype()), local[k]);
                    }
                }
            }
            for (int r = 0; r < resultSegment.length; r++) {
                int k = spec.results().get(r);
                DType t = nodes.get(k).dtype();
                code.aload(resultSegment[r]);
                layout(t);
                byteOffset(resultOffset[r], i, t);
                code.loadLocal(kind(t), local[k]);
                code.invokeinterface(CD_SEGMENT, "set", MethodTypeDesc.of(CD_void, layoutDesc(t), CD_long,
                        valueDesc(t)));
            }
            code.lload(i).lconst_1().ladd().lstore(i);
            code.labelBinding(test).lload(i).lload(TO).lcmp().iflt(body);
            code.return_();
        }

        /**
         * Block by block as {@code plan} says: copies each full-size input's block into its array, runs the
         * element loops over the arrays and the kernels between them, and copies each result's array out. Every
         * input element of a block is read before any result element of it is written.
         */
        void emitBlocked(BlockedLoopPlan plan) {
            prologue();
            List<FusedLoopSpec.Node> nodes = spec.nodes();
            int scratch = code.allocateLocal(TypeKind.REFERENCE);
            code.invokestatic(CD_BLOCK_SCRATCH, "local", MethodTypeDesc.of(CD_BLOCK_SCRATCH)).astore(scratch);
            int[] array = new int[nodes.size()];
            int[] taken = new int[DType.values().length];
            for (int k = 0; k < nodes.size(); k++) {
                if (plan.hasArray(k)) {
                    DType t = nodes.get(k).dtype();
                    array[k] = code.allocateLocal(TypeKind.REFERENCE);
                    code.aload(scratch).getstatic(CD_DTYPE, t.name(), CD_DTYPE).loadConstant(taken[t.ordinal()]++)
                            .invokevirtual(CD_BLOCK_SCRATCH, "array", SCRATCH_ARRAY)
                            .checkcast(valueDesc(t).arrayType()).astore(array[k]);
                }
            }
            int kernels = code.allocateLocal(TypeKind.REFERENCE);
            code.invokestatic(CD_FLOAT_MATH_BLOCK, "local", MethodTypeDesc.of(CD_FLOAT_MATH_BLOCK)).astore(kernels);
            int base = code.allocateLocal(TypeKind.LONG);
            int length = code.allocateLocal(TypeKind.INT);
            Label test = code.newLabel();
            Label block = code.newLabel();
            code.lload(FROM).lstore(base).goto_(test).labelBinding(block);
            blockLength(base);
            code.istore(length);
            for (int k = 0; k < nodes.size(); k++) {
                if (nodes.get(k) instanceof FusedLoopSpec.Element e) {
                    code.aload(inputSegment[k]);
                    layout(e.dtype());
                    byteOffset(inputOffset[k], base, e.dtype());
                    code.aload(array[k]).iconst_0().iload(length)
                            .invokestatic(CD_SEGMENT, "copy", COPY_IN, true);
                }
            }
            for (int loop = 0; loop < plan.loops(); loop++) {
                for (int k : plan.kernels(loop)) {
                    code.aload(kernels).aload(array[plan.kernelSource(k)]).aload(array[k]).iload(length)
                            .invokevirtual(CD_FLOAT_MATH_BLOCK,
                                    BlockedLoopPlan.kernelMethod((FusedLoopSpec.Apply) nodes.get(k)), KERNEL);
                }
                if (plan.hasWork(loop)) {
                    elementLoop(plan, loop, array, length);
                }
            }
            for (int r = 0; r < resultSegment.length; r++) {
                int k = spec.results().get(r);
                DType t = nodes.get(k).dtype();
                code.aload(array[k]).iconst_0().aload(resultSegment[r]);
                layout(t);
                byteOffset(resultOffset[r], base, t);
                code.iload(length).invokestatic(CD_SEGMENT, "copy", COPY_OUT, true);
            }
            code.lload(base).loadConstant((long) FloatMathBlock.SIZE).ladd().lstore(base);
            code.labelBinding(test).lload(base).lload(TO).lcmp().iflt(block);
            code.return_();
        }

        /** Pushes {@code min(SIZE, to - start)} as an int, for the long local {@code start}. */
        private void blockLength(int start) {
            code.lload(TO).lload(start).lsub().loadConstant((long) FloatMathBlock.SIZE)
                    .invokestatic(CD_MATH, "min", JJ_J).l2i();
        }

        /**
         * Pushes the byte offset of the element of {@code t} whose index the long local {@code index} holds, in a
         * segment whose element 0 is at the byte offset the long local {@code offset} holds.
         */
        private void byteOffset(int offset, int index, DType t) {
            code.lload(offset).lload(index).loadConstant((long) t.byteSize()).lmul().ladd();
        }

        /** Loop {@code loop} of {@code plan} over the {@code length} elements of a block. */
        private void elementLoop(BlockedLoopPlan plan, int loop, int[] array, int length) {
            List<FusedLoopSpec.Node> nodes = spec.nodes();
            int j = code.allocateLocal(TypeKind.INT);
            Label test = code.newLabel();
            Label body = code.newLabel();
            code.iconst_0().istore(j).goto_(test).labelBinding(body);
            for (int k : plan.loads(loop)) {
                DType t = nodes.get(k).dtype();
                code.aload(array[k]).iload(j).arrayLoad(arrayKind(t)).storeLocal(kind(t), local[k]);
            }
            for (int k : plan.computed(loop)) {
                FusedLoopSpec.Apply a = (FusedLoopSpec.Apply) nodes.get(k);
                apply(a);
                code.storeLocal(kind(a.dtype()), local[k]);
            }
            for (int k : plan.stores(loop)) {
                // a kernel's array receives its argument
                int value = plan.isKernel(k) ? plan.argument(k) : k;
                DType t = nodes.get(value).dtype();
                code.aload(array[k]).iload(j).loadLocal(kind(t), local[value]).arrayStore(arrayKind(t));
            }
            code.iinc(j, 1);
            code.labelBinding(test).iload(j).iload(length).if_icmplt(body);
        }

        private int segmentLocal(int array, int index) {
            int slot = code.allocateLocal(TypeKind.REFERENCE);
            code.aload(array).loadConstant(index).aaload().astore(slot);
            return slot;
        }

        /** A long local holding entry {@code index} of the offsets array in local {@code array}, 0 if it is null. */
        private int offsetLocal(int array, int index) {
            int slot = code.allocateLocal(TypeKind.LONG);
            Label none = code.newLabel();
            Label done = code.newLabel();
            code.aload(array).ifnull(none).aload(array).loadConstant(index).laload().lstore(slot).goto_(done);
            code.labelBinding(none).lconst_0().lstore(slot);
            code.labelBinding(done);
            return slot;
        }

        /** With the segment on the stack: pushes its element at the index {@code index} pushes. */
        private void load(DType t, Runnable index) {
            layout(t);
            index.run();
            code.invokeinterface(CD_SEGMENT, "getAtIndex", MethodTypeDesc.of(valueDesc(t), layoutDesc(t), CD_long));
        }

        private void layout(DType t) {
            String field = switch (t) {
                case F32 -> "JAVA_FLOAT_UNALIGNED";
                case F64 -> "JAVA_DOUBLE_UNALIGNED";
                case I32 -> "JAVA_INT_UNALIGNED";
                case I64 -> "JAVA_LONG_UNALIGNED";
                case BOOL -> "JAVA_BYTE";
            };
            code.getstatic(CD_LAYOUTS, field, layoutDesc(t));
        }

        private void arg(FusedLoopSpec.Apply a, int i) {
            int k = a.args().get(i);
            code.loadLocal(kind(spec.nodes().get(k).dtype()), local[k]);
        }

        /** Pushes the value of {@code a}, computed as its eager kernel computes it. */
        private void apply(FusedLoopSpec.Apply a) {
            DType t = a.operand();
            TypeKind k = kind(t);
            switch (a.op()) {
                case ADD -> binary(a, Opcode.IADD, Opcode.LADD, Opcode.FADD, Opcode.DADD);
                case SUB -> binary(a, Opcode.ISUB, Opcode.LSUB, Opcode.FSUB, Opcode.DSUB);
                case MUL -> binary(a, Opcode.IMUL, Opcode.LMUL, Opcode.FMUL, Opcode.DMUL);
                case DIV -> binary(a, Opcode.IDIV, Opcode.LDIV, Opcode.FDIV, Opcode.DDIV);
                case REM -> binary(a, Opcode.IREM, Opcode.LREM, Opcode.FREM, Opcode.DREM);
                case MAX -> math(a, "max");
                case MIN -> math(a, "min");
                case POW -> {
                    TypeKind wide = t.isFloating() ? TypeKind.DOUBLE : TypeKind.LONG;
                    arg(a, 0);
                    code.conversion(k, wide);
                    arg(a, 1);
                    code.conversion(k, wide);
                    if (t.isFloating()) {
                        code.invokestatic(CD_MATH, "pow", DD_D);
                    } else {
                        code.invokestatic(CD_ELEMENTWISE, "integerPower", JJ_J);
                    }
                    code.conversion(wide, k);
                }
                case NEG -> {
                    arg(a, 0);
                    code.with(OperatorInstruction.of(pick(t, Opcode.INEG, Opcode.LNEG, Opcode.FNEG, Opcode.DNEG)));
                }
                case ABS -> math(a, "abs");
                case EXP -> floatMath(a, "exp");
                case LOG -> transcendental(a, "log");
                case SQRT -> transcendental(a, "sqrt");
                case TANH -> transcendental(a, "tanh");
                case ATAN2 -> transcendental(a, "atan2");
                case SIN -> floatMath(a, "sin");
                case COS -> floatMath(a, "cos");
                case RSQRT -> {
                    code.loadConstant(1.0);
                    arg(a, 0);
                    code.conversion(k, TypeKind.DOUBLE).invokestatic(CD_MATH, "sqrt", D_D).ddiv()
                            .conversion(TypeKind.DOUBLE, k);
                }
                case LT, LE, GT, GE, EQ, NE -> compare(a);
                case SELECT -> {
                    arg(a, 0);
                    code.ifThenElse(Opcode.IFNE, b -> arg(a, 1), b -> arg(a, 2));
                }
                case CONVERT -> convert(a);
            }
        }

        /** {@code Math.fn} on the arguments, in the operand's own type. */
        private void math(FusedLoopSpec.Apply a, String fn) {
            ClassDesc v = valueDesc(a.operand());
            for (int i = 0; i < a.args().size(); i++) {
                arg(a, i);
            }
            code.invokestatic(CD_MATH, fn, a.args().size() == 1 ? MethodTypeDesc.of(v, v) : MethodTypeDesc.of(v, v, v));
        }

        private void binary(FusedLoopSpec.Apply a, Opcode i, Opcode l, Opcode f, Opcode d) {
            arg(a, 0);
            arg(a, 1);
            code.with(OperatorInstruction.of(pick(a.operand(), i, l, f, d)));
        }

        /** {@code Math.fn} in double on the arguments; f32 operands are widened and the result rounded. */
        private void transcendental(FusedLoopSpec.Apply a, String fn) {
            TypeKind k = kind(a.operand());
            for (int i = 0; i < a.args().size(); i++) {
                arg(a, i);
                code.conversion(k, TypeKind.DOUBLE);
            }
            code.invokestatic(CD_MATH, fn, a.args().size() == 1 ? D_D : DD_D).conversion(TypeKind.DOUBLE, k);
        }

        /** {@code FloatMath.fn} for f32, as the eager kernel computes it; {@code Math.fn} otherwise. */
        private void floatMath(FusedLoopSpec.Apply a, String fn) {
            if (kind(a.operand()) == TypeKind.FLOAT) {
                arg(a, 0);
                code.invokestatic(CD_FLOAT_MATH, fn, F_F);
            } else {
                transcendental(a, fn);
            }
        }

        /**
         * 1 or 0 as the kernels compute it: GT and GE swap the operands of LT and LE; floats compare with
         * {@code fcmpg}/{@code dcmpg} for LT/LE (NaN is false) and {@code fcmpl}/{@code dcmpl} for EQ/NE.
         */
        private void compare(FusedLoopSpec.Apply a) {
            ElementwiseOp c = a.op();
            boolean swap = c == ElementwiseOp.GT || c == ElementwiseOp.GE;
            arg(a, swap ? 1 : 0);
            arg(a, swap ? 0 : 1);
            boolean equality = c == ElementwiseOp.EQ || c == ElementwiseOp.NE;
            Opcode test = switch (c) {
                case EQ -> Opcode.IFEQ;
                case NE -> Opcode.IFNE;
                case LT, GT -> Opcode.IFLT;
                case LE, GE -> Opcode.IFLE;
                default -> throw new IllegalArgumentException(c + " is not a comparison");
            };
            switch (a.operand()) {
                case F32 -> code.with(OperatorInstruction.of(equality ? Opcode.FCMPL : Opcode.FCMPG));
                case F64 -> code.with(OperatorInstruction.of(equality ? Opcode.DCMPL : Opcode.DCMPG));
                case I64 -> code.lcmp();
                case I32, BOOL -> test = switch (c) {
                    case EQ -> Opcode.IF_ICMPEQ;
                    case NE -> Opcode.IF_ICMPNE;
                    case LT, GT -> Opcode.IF_ICMPLT;
                    case LE, GE -> Opcode.IF_ICMPLE;
                    default -> throw new IllegalArgumentException(c + " is not a comparison");
                };
            }
            code.ifThenElse(test, b -> b.iconst_1(), b -> b.iconst_0());
        }

        /** Java cast semantics; BOOL reads as 0 or 1 and converting to BOOL is {@code != 0} (NaN is true). */
        private void convert(FusedLoopSpec.Apply a) {
            DType from = a.operand();
            DType to = a.dtype();
            arg(a, 0);
            if (to == DType.BOOL && from != DType.BOOL) {
                switch (from) {
                    case F32 -> code.fconst_0().fcmpl();
                    case F64 -> code.dconst_0().dcmpl();
                    case I64 -> code.lconst_0().lcmp();
                    default -> {
                    }
                }
                code.ifThenElse(Opcode.IFNE, b -> b.iconst_1(), b -> b.iconst_0());
            } else if (kind(from) != kind(to)) {
                code.conversion(kind(from), kind(to));
            }
        }

        private static Opcode pick(DType t, Opcode i, Opcode l, Opcode f, Opcode d) {
            return switch (t) {
                case I32, BOOL -> i;
                case I64 -> l;
                case F32 -> f;
                case F64 -> d;
            };
        }
    }

    private static TypeKind kind(DType t) {
        return switch (t) {
            case F32 -> TypeKind.FLOAT;
            case F64 -> TypeKind.DOUBLE;
            case I32, BOOL -> TypeKind.INT;
            case I64 -> TypeKind.LONG;
        };
    }

    /** The element kind of a block's array of {@code t} values. */
    private static TypeKind arrayKind(DType t) {
        return switch (t) {
            case F32 -> TypeKind.FLOAT;
            case F64 -> TypeKind.DOUBLE;
            case I32 -> TypeKind.INT;
            case I64 -> TypeKind.LONG;
            case BOOL -> TypeKind.BYTE;
        };
    }

    private static ClassDesc valueDesc(DType t) {
        return switch (t) {
            case F32 -> CD_float;
            case F64 -> CD_double;
            case I32 -> CD_int;
            case I64 -> CD_long;
            case BOOL -> CD_byte;
        };
    }

    private static ClassDesc layoutDesc(DType t) {
        return desc(switch (t) {
            case F32 -> ValueLayout.OfFloat.class;
            case F64 -> ValueLayout.OfDouble.class;
            case I32 -> ValueLayout.OfInt.class;
            case I64 -> ValueLayout.OfLong.class;
            case BOOL -> ValueLayout.OfByte.class;
        });
    }
}
