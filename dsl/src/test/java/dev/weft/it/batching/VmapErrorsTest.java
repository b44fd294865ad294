package dev.weft.it.batching;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.NullArgumentException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.WeftException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** {@code vmap}'s errors name the user's line and say what is wrong (inside {@code @Compile}: VmapErrorsCompiledTest). */
class VmapErrorsTest {
    private static final Tensor A = Tensor.zeros(DType.F64, 3, 2);
    private static final Tensor B = Tensor.zeros(DType.F64, 4, 2);
    private static final Function<List<Tensor>, List<Tensor>> SUM = xs -> List.of(xs.get(0).add(xs.get(1)));

    /** The line after the caller's: where the failing call is written. */
    private static String nextLine() {
        return "VmapErrorsTest.java:" + (StackWalker.getInstance().walk(s -> s.skip(1).findFirst()).orElseThrow()
                .getLineNumber() + 1);
    }

    private static void fails(Runnable call, String line, Class<? extends WeftException> type, String... parts) {
        assertThatThrownBy(call::run).isInstanceOf(type).satisfies(e -> {
            assertThat(((WeftException) e).location().toString()).isEqualTo(line);
            assertThat(e.getMessage()).contains(parts);
        });
    }

    @Test
    void batchSizesThatDifferAreRefused() {
        Function<List<Tensor>, List<Tensor>> f = Weft.vmap(SUM, new int[] {0, 0}, new int[] {0});
        String line = nextLine();
        fails(() -> f.apply(List.of(A, B)), line, ShapeException.class, "argument 1 has 4 elements",
                "argument 0 has 3", "must agree");
    }

    @Test
    void anAxisOutOfRangeIsRefused() {
        Function<List<Tensor>, List<Tensor>> f = Weft.vmap(SUM, new int[] {0, 2}, new int[] {0});
        String line = nextLine();
        fails(() -> f.apply(List.of(A, A)), line, ShapeException.class, "inAxes[1] = 2 is out of range",
                "f64[3,2]");
        Function<List<Tensor>, List<Tensor>> g = Weft.vmap(SUM, new int[] {0, 0}, new int[] {2});
        line = nextLine();
        fails(() -> g.apply(List.of(A, A)), line, ShapeException.class, "outAxes[0] = 2 is out of range",
                "f64[2] per element", "0 to 1");
        line = nextLine();
        fails(() -> Weft.vmap(SUM, new int[] {-2, 0}, new int[] {0}), line, ShapeException.class, "inAxes [-2, 0]",
                "-1 for an unbatched argument");
        line = nextLine();
        fails(() -> Weft.vmap(SUM, new int[] {0, 0}, new int[] {-1}), line, ShapeException.class, "outAxes [-1]");
    }

    @Test
    void noBatchedArgumentIsRefused() {
        Function<List<Tensor>, List<Tensor>> f = Weft.vmap(SUM, new int[] {-1, -1}, new int[] {0});
        String line = nextLine();
        fails(() -> f.apply(List.of(A, A)), line, ShapeException.class, "no argument is batched");
    }

    @Test
    void countsThatDifferFromTheAxesAreRefused() {
        Function<List<Tensor>, List<Tensor>> f = Weft.vmap(SUM, new int[] {0}, new int[] {0});
        String line = nextLine();
        fails(() -> f.apply(List.of(A, A)), line, ShapeException.class, "given 2 arguments but inAxes [0] has 1");
        Function<List<Tensor>, List<Tensor>> g = Weft.vmap(SUM, new int[] {0, 0}, new int[] {0, 1});
        line = nextLine();
        fails(() -> g.apply(List.of(A, A)), line, ShapeException.class, "returned 1 tensors but outAxes [0, 1]");
    }

    @Test
    void nullsAreRefused() {
        String line = nextLine();
        fails(() -> Weft.vmap(null, new int[] {0}, new int[] {0}), line, NullArgumentException.class,
                "Weft.vmap", "'f'");
        line = nextLine();
        fails(() -> Weft.vmap(SUM, null, new int[] {0}), line, NullArgumentException.class, "'inAxes'");
        Function<List<Tensor>, List<Tensor>> f = Weft.vmap(SUM, new int[] {0, 0}, new int[] {0});
        line = nextLine();
        fails(() -> f.apply(Arrays.asList(A, null)), line, NullArgumentException.class, "arguments.get(1)");
        Function<Tensor, Tensor> g = Weft.vmap((Tensor x) -> null);
        line = nextLine();
        fails(() -> g.apply(A), line, NullArgumentException.class, "returned null as output 0");
        line = nextLine();
        fails(() -> Weft.vmap((Tensor x) -> x).apply(null), line, NullArgumentException.class, "'x'");
    }

    @Test
    void readingABatchedValueNamesVmap() {
        String line = nextLine();
        fails(() -> Weft.vmap((Tensor x) -> Tensor.scalar(DType.F64, x.sum().item())).apply(A), line,
                TracedValueException.class, "a batched tensor f64[]", "Weft.vmap");
    }

    @Test
    void aBatchedValueKeptPastItsVmapIsRefused() {
        List<Tensor> kept = new ArrayList<>();
        Weft.vmap((Tensor x) -> {
            kept.add(x);
            return x;
        }).apply(A);
        String line = nextLine();
        fails(() -> kept.getFirst().add(1), line, TracedValueException.class, "after the Weft.vmap call");
    }
}
