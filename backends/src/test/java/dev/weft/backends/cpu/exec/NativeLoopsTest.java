package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import dev.weft.backends.cpu.cc.CCompiler;
import dev.weft.backends.cpu.kernels.Elementwise;
import dev.weft.backends.cpu.kernels.FloatMath;
import dev.weft.backends.cpu.kernels.Reductions;
import dev.weft.backends.cpu.kernels.Scalars;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.OutputDirectory;
import dev.weft.spi.Setting;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fused loops compiled to C ({@link CLoopEmitter}, {@link NativeLoops}) compute what the JVM's loops compute, bit for
 * bit, on the values where C and Java differ unless the emitter takes care (NaN, signed zeros, infinities,
 * out-of-range casts, integer overflow); a library on disk is loaded without compiling; a call the native code
 * cannot check runs the JVM's loop. Needs a C compiler ({@code cc}); skipped without one.
 */
class NativeLoopsTest {
    private static final Map<String, NativeLoops.Tiered> LOOPS = new LinkedHashMap<>();
    private static CCompiler cc;

    @TempDir
    static Path cache;

    static Stream<Arguments> withC() {
        return ElementwiseCoverageTest.opsAndDtypes().filter(a -> CLoopEmitter.hasC(apply(a, 0, 1, 2)));
    }

    @BeforeAll
    static void compileEveryOpAtOnce() {
        assumeTrue(CCompiler.executable("cc").isPresent(), "no C compiler");
        cc = new CCompiler(CCompiler.executable("cc").get(), new OutputDirectory(cache, "the test"));
        withC().forEach(a -> LOOPS.put(name(a), tiered(spec(a))));
        LOOPS.put("rows", tiered(sum()));
        LOOPS.put("wide", tiered(wide()));
        NativeLoops.compile(cc, List.copyOf(LOOPS.values()));
        assertThat(LOOPS.values()).allMatch(NativeLoops.Tiered::isNative);
    }

    @ParameterizedTest(name = "{0} {1}->{2}")
    @MethodSource("withC")
    void everyOpWithACFormComputesTheJvmLoopsBits(ElementwiseOp op, DType in, DType out) {
        FusedLoopSpec spec = spec(Arguments.of(op, in, out));
        List<DType> operands = operands(op, in);
        int v = values(in).length;
        int n = (int) Math.pow(v, Math.min(2, operands.size())) * (operands.size() == 3 ? 2 : 1);
        MemorySegment[] args = new MemorySegment[operands.size()];
        for (int i = 0; i < args.length; i++) {
            args[i] = Arena.ofAuto().allocate((long) n * operands.get(i).byteSize(), 64);
            double[] vs = values(operands.get(i));
            for (int e = 0; e < n; e++) {
                // operand 0 cycles slowest, the last fastest: every combination of values meets
                int stride = i == 0 ? n / vs.length : i == 1 && args.length == 3 ? v : 1;
                set(operands.get(i), args[i], e, vs[(e / stride) % vs.length]);
            }
        }
        MemorySegment jvm = Arena.ofAuto().allocate((long) n * out.byteSize(), 64);
        MemorySegment c = Arena.ofAuto().allocate((long) n * out.byteSize(), 64);
        FusedLoopGenerator.loop(spec).run(args, new MemorySegment[] {jvm}, 0, n);
        LOOPS.get(name(Arguments.of(op, in, out))).run(args, new MemorySegment[] {c}, 0, n);
        assertThat(c.toArray(ValueLayout.JAVA_BYTE)).as("%s %s->%s", op, in, out)
                .isEqualTo(jvm.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void theOpsWithoutACFormAreTheOnesWhoseJavaResultCDoesNotPromise() {
        List<String> without = new ArrayList<>();
        ElementwiseCoverageTest.opsAndDtypes().filter(a -> !CLoopEmitter.hasC(apply(a, 0, 1, 2)))
                .forEach(a -> without.add(a.get()[0] + " " + a.get()[1]));
        assertThat(without)
                .allMatch(s -> s.matches("(POW|LOG|TANH|ATAN2|SIN|COS) .*|EXP F64|(DIV|REM|SQRT|RSQRT) I(32|64)"));
        assertThat(CLoopEmitter.function(spec(Arguments.of(ElementwiseOp.LOG, DType.F32, DType.F32)), "f")).isEmpty();
    }

    /**
     * f32 {@code exp} in C is {@code FloatMath.exp} bit for bit: across the reduced range and its edges (where the
     * result overflows, turns subnormal, underflows to 0), beyond it, at NaNs with payloads, and at random bit
     * patterns.
     */
    @Test
    void expComputesFloatMathsBitsEverywhere() {
        int n = 1 << 20;
        MemorySegment x = Arena.ofAuto().allocate(n * 4L, 64);
        Random random = new Random(11);
        float[] edges = {88.72283f, 88.72284f, Math.nextDown(104f), 104f, Math.nextUp(104f), -87.33655f, -103.27893f,
            -103.97208f, -103.97209f, Math.nextDown(-104f), -104f, -104.5f, 0f, -0f, Float.MIN_VALUE, 1e-30f,
            Float.MAX_VALUE, -Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN,
            Float.intBitsToFloat(0x7f800001), Float.intBitsToFloat(0xffc12345)};
        for (int i = 0; i < n; i++) {
            float v = i < edges.length ? edges[i] : i % 4 == 0 ? Float.intBitsToFloat(random.nextInt())
                    : i % 4 == 1 ? (random.nextFloat() - 0.5f) * 220 : (random.nextFloat() - 0.5f) * 8;
            x.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
        }
        MemorySegment c = Arena.ofAuto().allocate(n * 4L, 64);
        LOOPS.get(name(Arguments.of(ElementwiseOp.EXP, DType.F32, DType.F32)))
                .run(new MemorySegment[] {x}, new MemorySegment[] {c}, 0, n);
        for (int i = 0; i < n; i++) {
            float v = x.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            assertThat(Float.floatToRawIntBits(c.getAtIndex(ValueLayout.JAVA_FLOAT, i))).as("exp(%s)", v)
                    .isEqualTo(Float.floatToRawIntBits(FloatMath.exp(v)));
        }
    }

    @Test
    void rowsAdvanceEveryOffsetAsTheJvmLoopDoes() {
        NativeLoops.Tiered loop = LOOPS.get("rows");
        FusedLoop jvm = FusedLoopGenerator.loop(sum());
        MemorySegment a = floats(40);
        MemorySegment b = floats(40);
        MemorySegment outJvm = Arena.ofAuto().allocate(40 * 4, 64);
        MemorySegment outC = Arena.ofAuto().allocate(40 * 4, 64);
        long[][] offsets = {{4, 8}, {0}, {4, 8}, {0}};
        jvm.runRows(new MemorySegment[] {a, b}, offsets[0], new long[] {40, 32}, new MemorySegment[] {outJvm},
                offsets[1], new long[] {36}, 3, 1, 7);
        loop.runRows(new MemorySegment[] {a, b}, offsets[2], new long[] {40, 32}, new MemorySegment[] {outC},
                offsets[3], new long[] {36}, 3, 1, 7);
        assertThat(outC.toArray(ValueLayout.JAVA_FLOAT)).isEqualTo(outJvm.toArray(ValueLayout.JAVA_FLOAT));
        assertThat(outC.getAtIndex(ValueLayout.JAVA_FLOAT, 1)).isNotZero();
        assertThat(offsets[2]).isEqualTo(offsets[0]).containsExactly(124, 104);
        assertThat(offsets[3]).isEqualTo(offsets[1]).containsExactly(108);
    }

    /**
     * A loop with more inputs and results than the C compiler checks for overlap at run time (which it vectorizes
     * only because the emitter marks its elements independent), its results written over its inputs, element for
     * element, as the executor does with an input it no longer needs: the JVM's bits, over a length that leaves a
     * tail after the vector code.
     */
    @Test
    void aWideLoopWritingOverItsInputsComputesTheJvmLoopsBits() {
        int n = 1003;
        MemorySegment[] jvmIn = {floats(n), shuffled(n, 1), shuffled(n, 2), shuffled(n, 3)};
        MemorySegment[] cIn = {floats(n), shuffled(n, 1), shuffled(n, 2), shuffled(n, 3)};
        MemorySegment[] jvmOut = new MemorySegment[5];
        MemorySegment[] cOut = new MemorySegment[5];
        for (int r = 0; r < 5; r++) {
            jvmOut[r] = Arena.ofAuto().allocate(n * 4L, 64);
            cOut[r] = r < 4 ? cIn[(r + 1) % 4] : Arena.ofAuto().allocate(n * 4L, 64);
        }
        FusedLoopGenerator.loop(wide()).run(jvmIn, jvmOut, 0, n);
        LOOPS.get("wide").run(cIn, cOut, 0, n);
        for (int r = 0; r < 5; r++) {
            assertThat(cOut[r].toArray(ValueLayout.JAVA_FLOAT)).as("result %d", r)
                    .isEqualTo(jvmOut[r].toArray(ValueLayout.JAVA_FLOAT));
        }
        assertThat(cOut[0].toArray(ValueLayout.JAVA_FLOAT)).as("written over an input")
                .isNotEqualTo(floats(n).toArray(ValueLayout.JAVA_FLOAT));
    }

    @Test
    void aCallTheNativeCodeCannotCheckRunsTheJvmLoop() {
        NativeLoops.Tiered loop = LOOPS.get("rows");
        MemorySegment a = floats(8);
        MemorySegment out = Arena.ofAuto().allocate(8 * 4, 64);
        assertThatThrownBy(() -> loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, 9))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> loop.run(new MemorySegment[] {a, a}, null, new MemorySegment[] {out},
                new long[] {-4}, 0, 8)).isInstanceOf(IndexOutOfBoundsException.class);
        MemorySegment heap = MemorySegment.ofArray(new float[] {1, 2, 3, 4, 5, 6, 7, 8});
        loop.run(new MemorySegment[] {heap, a}, new MemorySegment[] {out}, 0, 8);
        assertThat(out.getAtIndex(ValueLayout.JAVA_FLOAT, 7)).isEqualTo(8 + a.getAtIndex(ValueLayout.JAVA_FLOAT, 7));
        Arena closed = Arena.ofConfined();
        MemorySegment gone = closed.allocate(8 * 4);
        closed.close();
        assertThatThrownBy(() -> loop.run(new MemorySegment[] {gone, a}, new MemorySegment[] {out}, 0, 8))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {a.asReadOnly()}, 0, 8))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aLibraryOnDiskLoadsWithoutCompiling() {
        FusedLoopSpec spec = spec(Arguments.of(ElementwiseOp.MUL, DType.F64, DType.F64));
        String key = tiered(spec).key;
        assertThat(cc.library(key)).as("each loop of a compiled library has its key's name").isPresent();
        CCompiler none = new CCompiler(Path.of("/bin/false"), new OutputDirectory(cache, "the test"));
        NativeLoops.Tiered again = new NativeLoops.Tiered(spec, none);
        // the compiler's identity is part of the key, so the same directory under another compiler misses
        assertThat(again.key).isNotEqualTo(key);
        NativeLoops.Tiered same = tiered(spec);
        NativeLoops.prepare(List.of(same));
        assertThat(same.isNative()).as("loaded at once, from disk").isTrue();
    }

    /**
     * A loop too small to compile when its executable is built loads then if its library is on disk; without one it
     * stays the JVM's and unclaimed, so that running hot can still make it native.
     */
    @Test
    void aSmallLoopLoadsAtBuildOnlyFromDisk() {
        NativeLoops.Tiered onDisk = tiered(spec(Arguments.of(ElementwiseOp.ADD, DType.F64, DType.F64)));
        assertThat(NativeLoops.loadIfOnDisk(onDisk)).as("library on disk").isTrue();
        assertThat(onDisk.isNative()).isTrue();
        SpecBuilder b = new SpecBuilder();
        NativeLoops.Tiered absent = tiered(b.spec(b.apply(ElementwiseOp.MIN, DType.F32,
                b.apply(ElementwiseOp.ADD, DType.F32, b.element(0, DType.F32), b.element(1, DType.F32)),
                b.element(1, DType.F32))));
        assertThat(cc.library(absent.key)).as("never compiled").isEmpty();
        assertThat(NativeLoops.loadIfOnDisk(absent)).as("no library on disk").isFalse();
        assertThat(absent.isNative()).isFalse();
        assertThat(absent.claimed.get()).as("left for promotion").isFalse();
    }

    @Test
    void aSmallLoopBecomesNativeOnceItHasRunEnoughElementsInCallsThatAreNotTiny() throws Exception {
        SpecBuilder s = new SpecBuilder();
        FusedLoopSpec spec = s.spec(s.apply(ElementwiseOp.MAX, DType.F64, s.element(0, DType.F64),
                s.element(1, DType.F64)));
        NativeLoops.Tiered loop = tiered(spec);
        int n = (int) NativeLoops.CALL_MIN;
        MemorySegment a = Arena.ofAuto().allocate(n * 8L, 64);
        MemorySegment out = Arena.ofAuto().allocate(n * 8L, 64);
        for (long done = 0; done < 2 * NativeLoops.HOT; done += 3) {
            loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, 3);
        }
        NativeLoops.awaitBackground();
        assertThat(loop.isNative()).as("tiny calls do not count").isFalse();
        for (long done = 0; done + n < NativeLoops.HOT; done += n) {
            loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, n);
        }
        NativeLoops.awaitBackground();
        assertThat(loop.isNative()).as("below HOT elements").isFalse();
        loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, n);
        NativeLoops.awaitBackground();
        assertThat(loop.isNative()).as("past HOT elements").isTrue();
    }

    /**
     * An executable's small loops left on the JVM are siblings: the first to run hot makes them all native, from one
     * library, so the C compiler runs once for them rather than once each.
     */
    @Test
    void siblingsBecomeNativeTogetherFromOneCompile() throws Exception {
        SpecBuilder s = new SpecBuilder();
        NativeLoops.Tiered hot = tiered(s.spec(s.apply(ElementwiseOp.SUB, DType.F32,
                s.apply(ElementwiseOp.MUL, DType.F32, s.element(0, DType.F32), s.element(1, DType.F32)),
                s.element(0, DType.F32))));
        SpecBuilder t = new SpecBuilder();
        NativeLoops.Tiered idle = tiered(t.spec(t.apply(ElementwiseOp.MAX, DType.F64,
                t.apply(ElementwiseOp.SUB, DType.F64, t.element(0, DType.F64), t.element(1, DType.F64)),
                t.element(1, DType.F64))));
        assertThat(cc.library(hot.key)).as("never compiled").isEmpty();
        assertThat(cc.library(idle.key)).as("never compiled").isEmpty();
        NativeLoops.group(List.of(hot, idle));
        int n = (int) NativeLoops.CALL_MIN;
        MemorySegment a = Arena.ofAuto().allocate(n * 4L, 64);
        MemorySegment out = Arena.ofAuto().allocate(n * 4L, 64);
        for (long done = 0; done <= NativeLoops.HOT; done += n) {
            hot.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, n);
        }
        NativeLoops.awaitBackground();
        assertThat(hot.isNative()).as("past HOT elements").isTrue();
        assertThat(idle.isNative()).as("made native with its sibling, never having run").isTrue();
        assertThat(Files.isSameFile(cc.library(hot.key).orElseThrow(), cc.library(idle.key).orElseThrow()))
                .as("one library, one compile").isTrue();
    }

    @Test
    void aCompilerThatFailsLeavesTheLoopOnTheJvm(@TempDir Path dir) {
        FusedLoopSpec spec = spec(Arguments.of(ElementwiseOp.SUB, DType.I32, DType.I32));
        CCompiler failing = new CCompiler(Path.of("/bin/false"), new OutputDirectory(dir, "the test"));
        NativeLoops.Tiered loop = new NativeLoops.Tiered(spec, failing);
        NativeLoops.compile(failing, List.of(loop));
        assertThat(loop.isNative()).isFalse();
        MemorySegment a = Arena.ofAuto().allocate(4 * 4);
        MemorySegment out = Arena.ofAuto().allocate(4 * 4);
        a.setAtIndex(ValueLayout.JAVA_INT, 3, 5);
        loop.run(new MemorySegment[] {a, a}, new MemorySegment[] {out}, 0, 4);
        assertThat(out.getAtIndex(ValueLayout.JAVA_INT, 3)).isZero();
    }

    /**
     * In a program, an unfused elementwise op and a reduction of leading axes run through native loops (once their
     * background compile is done) and give the JVM kernels' bits: the product, and its sum and maximum over axis 0
     * folded row after row.
     */
    @Test
    void aProgramsUnfusedOpsAndLeadingReductionsRunNativeWithTheKernelsBits() throws Exception {
        assumeTrue(!"off".equalsIgnoreCase(String.valueOf(Setting.CC.text())), "WEFT_CC=off");
        Ir ir = new Ir();
        List<Value> a = Ir.args(Ir.t(DType.F32, 128, 40), Ir.t(DType.F32, 128, 40));
        Value product = ir.binary(ElementwiseOp.MUL, a.get(0), a.get(1));
        Value sum = ir.op(StableHlo.REDUCE, List.of(product, ir.f32(0.5f)), List.of(Ir.t(DType.F32, 40)),
                Map.of("dimensions", Attr.I64Array.of(0)), List.of(body(ir, ElementwiseOp.ADD))).result();
        Value max = ir.op(StableHlo.REDUCE, List.of(product, ir.f32(Float.NEGATIVE_INFINITY)),
                List.of(Ir.t(DType.F32, 40)), Map.of("dimensions", Attr.I64Array.of(0)),
                List.of(body(ir, ElementwiseOp.MAX))).result();
        Module module = ir.module(a, product, sum, max);
        new CpuExecutable(module);
        NativeLoops.awaitBackground();
        CpuExecutable exe = new CpuExecutable(module);
        float[] x = new float[128 * 40];
        float[] y = new float[128 * 40];
        Random random = new Random(7);
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian() * 1e3f;
            y[i] = i % 97 == 0 ? Float.NaN : (float) random.nextGaussian();
        }
        List<Tensor> out = exe.run(List.of(Tensor.of(x, 128, 40), Tensor.of(y, 128, 40)));
        assertThat(NativeLoops.nativeOnly(new FusedLoopSpec(List.of(new FusedLoopSpec.Element(0, DType.F32),
                new FusedLoopSpec.Element(1, DType.F32), new FusedLoopSpec.Apply(ElementwiseOp.ADD, DType.F32,
                DType.F32, List.of(0, 1))), List.of(2))).map(l -> ((NativeLoops.Tiered) l).isNative()))
                .as("the sum's fold ran native").contains(true);
        MemorySegment xs = MemorySegment.ofArray(x);
        MemorySegment ys = MemorySegment.ofArray(y);
        MemorySegment p = Arena.ofAuto().allocate(x.length * 4L);
        Elementwise.binary(ElementwiseOp.MUL, DType.F32, xs, ys, p, x.length);
        MemorySegment s = Arena.ofAuto().allocate(40 * 4L);
        MemorySegment m = Arena.ofAuto().allocate(40 * 4L);
        for (int j = 0; j < 40; j++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, j, 0.5f);
            m.setAtIndex(ValueLayout.JAVA_FLOAT, j, Float.NEGATIVE_INFINITY);
        }
        Reductions.accumulate(ElementwiseOp.ADD, DType.F32, p, new long[] {128, 40},
                new int[] {0}, s);
        Reductions.accumulate(ElementwiseOp.MAX, DType.F32, p, new long[] {128, 40},
                new int[] {0}, m);
        assertThat(out.get(0).toFloatArray()).isEqualTo(p.toArray(ValueLayout.JAVA_FLOAT));
        assertThat(out.get(1).toFloatArray()).isEqualTo(s.toArray(ValueLayout.JAVA_FLOAT));
        assertThat(out.get(2).toFloatArray()).isEqualTo(m.toArray(ValueLayout.JAVA_FLOAT));
        assertThat(out.get(2).toFloatArray()).contains(Float.NaN);
    }

    private static Block body(Ir ir, ElementwiseOp combiner) {
        ir.begin();
        List<Value> b = Ir.args(Ir.t(DType.F32), Ir.t(DType.F32));
        return ir.close(b, ir.binary(combiner, b.get(0), b.get(1)));
    }

    private static NativeLoops.Tiered tiered(FusedLoopSpec spec) {
        return new NativeLoops.Tiered(spec, cc);
    }

    private static FusedLoopSpec sum() {
        SpecBuilder s = new SpecBuilder();
        return s.spec(s.apply(ElementwiseOp.ADD, DType.F32, s.element(0, DType.F32), s.element(1, DType.F32)));
    }

    /** Four f32 inputs, five results: relu's value and mask of {@code a+b}, and three mixes of all four. */
    private static FusedLoopSpec wide() {
        SpecBuilder s = new SpecBuilder();
        DType f = DType.F32;
        int a = s.element(0, f);
        int b = s.element(1, f);
        int c = s.element(2, f);
        int d = s.element(3, f);
        int sum = s.apply(ElementwiseOp.ADD, f, a, b);
        int zero = s.apply(ElementwiseOp.SUB, f, a, a);
        int relu = s.apply(ElementwiseOp.MAX, f, sum, zero);
        int mask = s.apply(ElementwiseOp.CONVERT, DType.BOOL, f, s.compare(ElementwiseOp.GT, f, sum, zero));
        int cd = s.apply(ElementwiseOp.MUL, f, c, d);
        return s.spec(relu, mask, s.apply(ElementwiseOp.SUB, f, cd, a), s.apply(ElementwiseOp.ADD, f, cd, b),
                s.apply(ElementwiseOp.MIN, f, c, relu));
    }

    /** {@code n} floats, of both signs, in an order that differs with {@code seed}. */
    private static MemorySegment shuffled(int n, int seed) {
        Random random = new Random(seed);
        MemorySegment s = Arena.ofAuto().allocate(n * 4L, 64);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (random.nextInt(41) - 20) * 0.25f);
        }
        return s;
    }

    private static MemorySegment floats(int n) {
        MemorySegment s = Arena.ofAuto().allocate(n * 4L, 64);
        for (int i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, i * 0.75f - 3);
        }
        return s;
    }

    private static String name(Arguments a) {
        return a.get()[0] + " " + a.get()[1] + " " + a.get()[2];
    }

    private static List<DType> operands(ElementwiseOp op, DType in) {
        return IntStream.range(0, op.arity()).mapToObj(i -> op == ElementwiseOp.SELECT && i == 0 ? DType.BOOL : in)
                .toList();
    }

    private static FusedLoopSpec.Apply apply(Arguments a, int... args) {
        ElementwiseOp op = (ElementwiseOp) a.get()[0];
        return new FusedLoopSpec.Apply(op, (DType) a.get()[1], (DType) a.get()[2],
                IntStream.of(args).limit(op.arity()).boxed().toList());
    }

    private static FusedLoopSpec spec(Arguments a) {
        ElementwiseOp op = (ElementwiseOp) a.get()[0];
        SpecBuilder s = new SpecBuilder();
        List<DType> operands = operands(op, (DType) a.get()[1]);
        int[] nodes = IntStream.range(0, operands.size()).map(i -> s.element(i, operands.get(i))).toArray();
        return s.spec(s.apply(op, (DType) a.get()[1], (DType) a.get()[2], nodes));
    }

    /** The values where C's and Java's answers part unless the emitter takes care. */
    private static double[] values(DType t) {
        return switch (t) {
            case F32, F64 -> new double[] {0.0, -0.0, 1.0, -1.5, 2.5, Double.NaN, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, 3.0e38, -3.0e38, 1.0e-45, 2147483647.0, -2147483649.0, 9.3e18, -9.3e18,
                1.0e300, 0.1};
            case I32, I64 -> new double[] {0, 1, -1, 7, -7, 123456789, Integer.MAX_VALUE, Integer.MIN_VALUE,
                Long.MAX_VALUE, Long.MIN_VALUE};
            case BOOL -> new double[] {0, 1};
        };
    }

    private static void set(DType t, MemorySegment s, int i, double v) {
        switch (t) {
            case F32, F64 -> Scalars.setDouble(t, s, i, v);
            case I32 -> s.setAtIndex(ValueLayout.JAVA_INT, i, (int) (long) v);
            case I64 -> s.setAtIndex(ValueLayout.JAVA_LONG, i, (long) v);
            case BOOL -> Scalars.setLong(t, s, i, (long) v);
        }
    }
}
