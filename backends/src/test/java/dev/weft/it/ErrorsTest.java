package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.TracedValueException;
import dev.weft.Vjp;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each user error is a {@link WeftException} subclass whose message names this file and the line of the offending
 * statement. Bodies record that line with {@link #here()} on the same source line as the statement.
 */
class ErrorsTest {
    /** CallSite recorded by compiled bodies while they are traced, by method name. */
    private static final Map<String, Integer> LINES = new ConcurrentHashMap<>();
    private static Tensor leaked;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** The line of the caller's statement. */
    private static int here() {
        return lineOf(2);
    }

    /** The line of the frame {@code depth} calls up from this one (also if the agent has since retransformed it). */
    private static int lineOf(int depth) {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(s -> s.skip(depth).findFirst()).map(SourceLocation::of).orElseThrow().line();
    }

    private static void assertNamesLine(Throwable e, Class<? extends WeftException> type, int line) {
        assertThat(e).isInstanceOf(type);
        assertThat(e.getMessage()).startsWith("ErrorsTest.java:" + line + ": ");
    }

    // ---- the table: one user mistake per row, each on the line of its offending call --------------------------

    /** Where a row runs: eagerly, inside {@code @Compile}, or both. */
    private enum Mode { BOTH, EAGER, COMPILED }

    /** A row: what the user did to {@code input} (on the row's line) and what the message must quote. */
    private record Case(String description, Mode mode, Tensor input, UnaryOperator<Tensor> action, String fragment,
                        int line) {
        @Override
        public String toString() {
            return description;
        }
    }

    private static final Class<?> SELF = ErrorsTest.class;
    private static final TensorSpec SPEC = TensorSpec.of(DType.F32, 2);
    /** Where the fori rows' bodies keep their carry, as a user might to read it after the loop. */
    private static final Tensor[] KEPT = new Tensor[1];
    private static final Tensor F = Tensor.zeros(DType.F32, 2, 3);
    private static final Tensor I = Tensor.of(new int[] {1, 2, 3});
    private static final Tensor B = Tensor.of(new boolean[] {true, false});
    private static final Tensor BIG = Tensor.of(new long[] {1, 5_000_000_000L});

    private static final List<Case> CASES = List.of(
            row("zeros, negative dimension", x -> Tensor.zeros(DType.F32, -1, 3), "[-1, 3]"),
            row("zeros, bytes overflow", x -> Tensor.zeros(DType.F64, (1L << 61) + 1), "f64[2305843009213693953]"),
            row("zeros, elements overflow", x -> Tensor.zeros(DType.F32, 1L << 40, 1L << 40), "[1099511627776, "),
            row("zeros, out of memory", x -> Tensor.zeros(DType.F64, 1L << 57), "f64[144115188075855872]"),
            row("full, negative dimension", x -> Tensor.full(DType.F32, 1, 2, -2), "[2, -2]"),
            row("of, wrong element count", x -> Tensor.of(new float[] {1, 2, 3}, 2, 2), "[2,2]"),
            row("arange, negative n", x -> Tensor.arange(DType.I32, -5), "n = -5"),
            row("arange, bool", x -> Tensor.arange(DType.BOOL, 2), "bool"),
            row("add, not broadcastable", x -> x.add(Tensor.zeros(DType.F32, 4)), "[2,3] and [4]"),
            row("add, dtypes differ", x -> x.add(Tensor.zeros(DType.I32, 3)), "f32 and i32"),
            row("maximum, dtypes differ", x -> x.maximum(Tensor.zeros(DType.I32, 2, 3)), "maximum"),
            row("lt, not broadcastable", x -> x.lt(Tensor.zeros(DType.F32, 2)), "lt"),
            row("exp of ints", I, x -> x.exp(), "exp: needs f32 or f64, got i32"),
            row("mean of ints", I, x -> x.mean(), "mean: needs f32 or f64, got i32"),
            row("int plus a fraction", I, x -> x.add(0.5), "0.5"),
            row("arithmetic on bool", B, x -> x.mul(2), "bool"),
            row("sum, negative axis out of range", x -> x.sum(-3), "axis -3"),
            row("max, axis out of range", x -> x.max(2), "axis 2"),
            row("sum, axis repeated", x -> x.sum(1, -1), "[1, -1]"),
            row("mean, negative axis out of range", x -> x.mean(-3), "axis -3"),
            row("transpose, negative axis out of range", x -> x.transpose(-3, 0), "axis -3"),
            row("transpose, axis repeated", x -> x.transpose(0, 0), "[0, 0]"),
            row("transpose, too few axes", x -> x.transpose(1), "[1]"),
            row("concat, negative axis out of range", x -> Tensor.concat(-3, x, x), "axis -3"),
            row("concat, shapes differ", x -> Tensor.concat(0, x, Tensor.zeros(DType.F32, 2, 4)), "[2,4]"),
            row("concat, dtypes differ", x -> Tensor.concat(1, x, Tensor.zeros(DType.I32, 2, 3)), "i32"),
            row("reshape, wrong size", x -> x.reshape(4, 2), "[4,2]"),
            row("reshape, two -1", x -> x.reshape(-1, -1), "[-1, -1]"),
            row("reshape, -1 does not divide", x -> x.reshape(-1, 4), "[-1, 4]"),
            row("reshape, elements overflow", x -> x.reshape(1L << 40, 1L << 40), "[1099511627776, "),
            row("matmul, contraction differs", x -> x.matmul(x), "[2,3] @ [2,3]"),
            row("matmul, scalar", x -> x.matmul(Tensor.scalar(DType.F32, 2)), "[2,3] @ []"),
            row("broadcastTo, incompatible", x -> x.broadcastTo(4, 3), "[4, 3]"),
            row("broadcastTo, negative dimension", x -> x.broadcastTo(2, -3), "[2, -3]"),
            row("slice, limit out of range", x -> x.slice(new long[] {0, 1}, new long[] {2, 4}), "[1, 4)"),
            row("slice, wrong rank", x -> x.slice(new long[] {0}, new long[] {1}), "[0]"),
            row("pad, negative", x -> x.pad(new long[] {-1, 0}, new long[] {0, 0}), "[-1, 0]"),
            row("where, condition not bool", x -> Tensor.where(x, x, x), "condition must be bool, got f32"),
            row("item, not one element", Mode.EAGER, F, x -> Tensor.scalar(DType.F32, x.item()), "f32[2,3] has 6"),
            row("toIntArray, value beyond int", Mode.EAGER, BIG, x -> Tensor.of(x.toIntArray()), "5000000000"),
            row("fori, body changes the shape", x -> Weft.fori(0, 3, x, (i, c) -> c.sum()), "f32[] but"),
            row("fori, body changes the dtype", x -> Weft.fori(0, 3, x, (i, c) -> c.cast(DType.F64)), "f64[2,3]"),
            compiledRow("fori, carry used after", x -> then(Weft.fori(0, 2, x, (i, c) -> KEPT[0] = c), KEPT[0].add(1)),
                    "outside the fori body"),
            compiledRow("fori, carry returned", x -> then(Weft.fori(0, 2, x, (i, c) -> KEPT[0] = c), KEPT[0]),
                    "as a result"),
            compiledRow("cond, branches differ", x -> Weft.cond(x.sum().gt(0), () -> x, x::sum), "f32[]"),
            row("cond, predicate not scalar", x -> Weft.cond(x.gt(0), () -> x, () -> x), "scalar, got"),
            row("pullback, f64 cotangent", x -> sumVjp(x).pullback(List.of(Tensor.scalar(DType.F64, 1))).get(0), "f64"),
            row("grad with respect to ints", I, x -> Weft.grad(t -> t.cast(DType.F32).sum()).apply(x),
                    "grad: the argument must be f32 or f64, got i32[3]"),
            row("ReduceOp.custom, bad name", x -> then(ReduceOp.custom("a b", Tensor::add), x), "'a b'"),
            row("TensorSpec, negative dimension", x -> then(TensorSpec.of(DType.F32, 2, -1), x), "[2, -1]"),
            row("lower, int for a tensor", x -> then(Weft.lower(SELF, "compiledCase", 3, 0), x), "is 3 (Integer)"),
            row("lower, spec for an int", x -> then(Weft.lower(SELF, "compiledCase", SPEC, SPEC), x), "f32[2] (Tens"));

    private static Case row(String description, UnaryOperator<Tensor> action, String fragment) {
        return new Case(description, Mode.BOTH, F, action, fragment, lineOf(2));
    }

    private static Case row(String description, Tensor input, UnaryOperator<Tensor> action, String fragment) {
        return new Case(description, Mode.BOTH, input, action, fragment, lineOf(2));
    }

    private static Case row(String description, Mode mode, Tensor input, UnaryOperator<Tensor> action,
                            String fragment) {
        return new Case(description, mode, input, action, fragment, lineOf(2));
    }

    private static Case compiledRow(String description, UnaryOperator<Tensor> action, String fragment) {
        return new Case(description, Mode.COMPILED, F, action, fragment, lineOf(2));
    }

    /** The VJP of {@code sum} at {@code x}. */
    private static Vjp sumVjp(Tensor x) {
        return Weft.vjp(v -> List.of(v.getFirst().sum()), List.of(x));
    }

    /** {@code x}, once {@code made} was made: for rows whose call returns no tensor. */
    private static Tensor then(Object made, Tensor x) {
        return x;
    }

    @Compile
    static Tensor compiledCase(Tensor x, int index) {
        return CASES.get(index).action().apply(x);
    }

    static List<Case> cases() {
        return CASES;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void eachMistakeIsAWeftExceptionAtItsLineQuotingTheUser(Case c) {
        if (c.mode() != Mode.COMPILED) {
            CommErrorCases.assertStartsAtLine(catchThrowable(() -> c.action().apply(c.input())), "ErrorsTest.java",
                    c.line(), c.fragment());
        }
        if (c.mode() != Mode.EAGER) {
            CommErrorCases.assertStartsAtLine(catchThrowable(() -> compiledCase(c.input(), CASES.indexOf(c))),
                    "ErrorsTest.java", c.line(), c.fragment());
        }
    }

    @Test
    void aCotangentOfAnotherDtypeIsADTypeExceptionAndOfAnotherShapeAShapeException() {
        var pullback = sumVjp(F);
        assertThat(catchThrowable(() -> pullback.pullback(List.of(Tensor.scalar(DType.F64, 1)))))
                .isInstanceOf(DTypeException.class);
        assertThat(catchThrowable(() -> pullback.pullback(List.of(Tensor.zeros(DType.F32, 2)))))
                .isInstanceOf(ShapeException.class).hasMessageContaining("cotangent 0 is f32[2] but output 0 is f32[]");
    }

    static List<CommErrorCases.Case> commCases() {
        return CommErrorCases.CASES;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("commCases")
    void eachCommMistakeOnFakeRanksIsAWeftExceptionAtItsLine(CommErrorCases.Case c) {
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm comm = Comm.world();
            CommErrorCases.check(c, comm, false);
            comm.barrier();
            CommErrorCases.check(c, comm, true);
            return null;
        }));
    }

    @Compile
    static Tensor badAdd(Tensor a, Tensor b) {
        LINES.put("badAdd", here()); return a.add(b);
    }

    @Test
    void shapeMismatchInsideCompileAndEagerly() {
        Tensor a = Tensor.zeros(DType.F32, 2, 3), b = Tensor.zeros(DType.F32, 4);
        assertNamesLine(catchThrowable(() -> badAdd(a, b)), ShapeException.class, LINES.get("badAdd"));
        int line = here(); Throwable eager = catchThrowable(() -> a.add(b));
        assertNamesLine(eager, ShapeException.class, line);
    }

    @Compile
    static Tensor mixedAdd(Tensor a, Tensor b) {
        LINES.put("mixedAdd", here()); return a.add(b);
    }

    @Test
    void dtypeMismatchInsideCompileAndEagerly() {
        Tensor a = Tensor.zeros(DType.F32, 3), b = Tensor.zeros(DType.I32, 3);
        assertNamesLine(catchThrowable(() -> mixedAdd(a, b)), DTypeException.class, LINES.get("mixedAdd"));
        int line = here(); Throwable eager = catchThrowable(() -> a.add(b));
        assertNamesLine(eager, DTypeException.class, line);
    }

    @Compile
    static Tensor readsItem(Tensor a) {
        LINES.put("readsItem", here()); return a.sum().item() > 0 ? a : a.neg();
    }

    @Compile
    static Tensor readsArray(Tensor a) {
        LINES.put("readsArray", here()); return a.mul(a.toFloatArray()[0]);
    }

    @Test
    void readingATracedValuePointsToCondOrWhere() {
        Tensor a = Tensor.ones(DType.F32, 3);
        for (var call : List.of(Map.entry("readsItem", (Runnable) () -> readsItem(a)),
                Map.entry("readsArray", (Runnable) () -> readsArray(a)))) {
            Throwable e = catchThrowable(call.getValue()::run);
            assertNamesLine(e, TracedValueException.class, LINES.get(call.getKey()));
            assertThat(e.getMessage()).contains("Weft.cond").contains("Tensor.where");
        }
    }

    @Compile
    static Tensor takesMap(Tensor a, Map<String, Integer> options) {
        return a;
    }

    @Test
    void unsupportedArgumentTypeNamesTheCallingLine() {
        Tensor a = Tensor.ones(DType.F32, 3);
        int line = here(); Throwable e = catchThrowable(() -> takesMap(a, Map.of("k", 1)));
        assertNamesLine(e, WeftException.class, line);
        assertThat(e.getMessage()).contains("takesMap(Tensor, Map).k is a java.lang.Integer");
    }

    @Compile
    static Tensor growingLoop(Tensor a) {
        LINES.put("growingLoop", here()); return Weft.fori(0, 3, a, (i, c) -> Tensor.concat(0, c, c));
    }

    @Test
    void foriBodyReturningAnotherShape() {
        Throwable e = catchThrowable(() -> growingLoop(Tensor.ones(DType.F32, 2)));
        assertNamesLine(e, WeftException.class, LINES.get("growingLoop"));
        assertThat(e.getMessage()).contains("[2]").contains("[4]");
    }

    @Compile
    static Tensor mixedBranches(Tensor a) {
        LINES.put("mixedBranches", here()); return Weft.cond(a.sum().gt(0), () -> a, () -> a.cast(DType.I32));
    }

    @Test
    void condBranchesOfDifferentDtypes() {
        Throwable e = catchThrowable(() -> mixedBranches(Tensor.ones(DType.F32, 2)));
        assertNamesLine(e, WeftException.class, LINES.get("mixedBranches"));
        assertThat(e.getMessage()).containsIgnoringCase("f32").containsIgnoringCase("i32");
    }

    @Compile
    static Tensor leaks(Tensor a) {
        leaked = a.mul(2);
        return a;
    }

    @Compile
    static Tensor identity(Tensor a) {
        return a;
    }

    @Test
    void tracedTensorLeakedFromATrace() {
        leaks(Tensor.ones(DType.F32, 2));
        assertThat(leaked.isTraced()).isTrue();
        int line = here(); Throwable read = catchThrowable(() -> leaked.toFloatArray());
        assertNamesLine(read, TracedValueException.class, line);
        int callLine = here(); Throwable passed = catchThrowable(() -> identity(leaked));
        assertNamesLine(passed, TracedValueException.class, callLine);
        int opLine = here(); Throwable used = catchThrowable(() -> leaked.add(1).toFloatArray());
        assertNamesLine(used, TracedValueException.class, opLine);
    }

    @Compile
    static Tensor divides(Tensor a, Tensor b) {
        Tensor c = a.add(1);
        LINES.put("divides", here()); return c.div(b);
    }

    @Test
    void integerDivisionByZeroInACompiledProgramNamesTheDiv() {
        Tensor a = Tensor.of(new int[] {4, 5}), b = Tensor.of(new int[] {2, 0});
        Throwable e = catchThrowable(() -> divides(a, b));
        assertNamesLine(e, WeftException.class, LINES.get("divides"));
        assertThat(e.getMessage()).contains("division by zero");
        assertThat(divides(a, Tensor.of(new int[] {2, 3})).toIntArray()).containsExactly(2, 2);
    }
}
