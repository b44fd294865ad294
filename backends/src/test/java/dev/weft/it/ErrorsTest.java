package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.WeftException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each user error is a {@link WeftException} subclass whose message names this file and the line of the offending
 * statement. Bodies record that line with {@link #here()} on the same source line as the statement.
 */
class ErrorsTest {
    /** Lines recorded by compiled bodies while they are traced, by method name. */
    private static final Map<String, Integer> LINES = new ConcurrentHashMap<>();
    private static Tensor leaked;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** The line of the caller's statement. */
    private static int here() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    private static void assertNamesLine(Throwable e, Class<? extends WeftException> type, int line) {
        assertThat(e).isInstanceOf(type);
        assertThat(e.getMessage()).contains("ErrorsTest.java:" + line);
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
        assertThat(e.getMessage()).contains("java.util");
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
