package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.IntPredicate;

/**
 * Misuses of communication, one row each, that {@link ErrorsTest} runs on fake ranks and {@code MpiErrorsTest} under
 * {@code mpirun}, eagerly and inside {@code @Compile}: on the ranks a row names, the call fails with a
 * {@link WeftException} whose message starts with this file and the row's line and quotes what the row wrote; on
 * the others it completes. Every row leaves no message in flight, so rows run one after another on one world.
 */
public final class CommErrorCases {
    /**
     * A row: the call (written on the row's line), the ranks it fails on, and what the message must quote. A row
     * whose ranks communicate differently ({@code mismatched}) fails, eager or compiled, with a schedule mismatch on
     * the ranks it names (a receive that does not match its message; the sender completes, as under MPI), the
     * schedule check being on by default.
     */
    public record Case(String description, BiFunction<Comm, Tensor, Tensor> action, IntPredicate failsOn,
                       String fragment, int line, boolean mismatched) {
        @Override
        public String toString() {
            return description;
        }
    }

    private static final IntPredicate ALL = r -> true;
    private static final ReduceOp SCALAR_OP = ReduceOp.custom("to_scalar", (a, b) -> a.add(b).sum());
    private static final long[] EIGHT = {8};
    private static final ReduceOp F64_OP = ReduceOp.custom("to_f64", (a, b) -> a.add(b).cast(DType.F64));

    /** The rows; {@code x} is an f32[4] and every row runs on two ranks. */
    public static final List<Case> CASES = List.of(
            row("split, negative color", (c, x) -> c.split(-1, 0).rankTensor(), ALL, "color -1"),
            row("send, peer out of range", (c, x) -> { c.send(x, 2, 0); return x; }, ALL, "rank 2"),
            row("send, negative peer", (c, x) -> { c.send(x, -1, 0); return x; }, ALL, "rank -1"),
            row("send, negative tag", (c, x) -> { c.send(x, 1 - c.rank(), -3); return x; }, ALL, "tag -3"),
            row("recv, peer out of range", (c, x) -> c.recv(DType.F32, new long[] {4}, 5, 0), ALL, "rank 5"),
            row("recv, negative shape", (c, x) -> c.recv(DType.F32, new long[] {-4}, 0, 0), ALL, "[-4]"),
            mismatch("recv, other size", (c, x) -> c.rank() == 0 ? sent(c, x) : c.recv(DType.F32, EIGHT, 0, 7),
                    r -> r == 1, "f32[8]"),
            row("bcast, root out of range", (c, x) -> c.bcast(x, 3), ALL, "rank 3"),
            row("reduce, negative root", (c, x) -> c.reduce(x, ReduceOp.SUM, -2), ALL, "rank -2"),
            row("reduceScatter, indivisible", (c, x) -> c.reduceScatter(x.reshape(1, 4), ReduceOp.SUM), ALL, "[1,4]"),
            row("custom op, scalar result", (c, x) -> c.allreduce(x, SCALAR_OP), ALL, "'to_scalar' returned f32[]"),
            row("custom op, f64 result", (c, x) -> c.allreduce(x, F64_OP), ALL, "'to_f64' returned f64[4]"),
            row("custom op, communicates", (c, x) -> c.allreduce(x, ReduceOp.custom("chatty", (a, b) -> c.allreduce(a,
                    ReduceOp.SUM).add(b))), ALL, "allreduce inside custom reduce op 'chatty': a reduce op must not"));

    private CommErrorCases() {
    }

    private static Case row(String description, BiFunction<Comm, Tensor, Tensor> action, IntPredicate failsOn,
                            String fragment) {
        return new Case(description, action, failsOn, fragment, callerLine(), false);
    }

    private static Case mismatch(String description, BiFunction<Comm, Tensor, Tensor> action, IntPredicate failsOn,
                                 String fragment) {
        return new Case(description, action, failsOn, fragment, callerLine(), true);
    }

    private static int callerLine() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(s -> s.skip(2).findFirst()).map(SourceLocation::of).orElseThrow().line();
    }

    /** Sends {@code x} to rank 1 with tag 7 (the half of a row that does not fail). */
    private static Tensor sent(Comm c, Tensor x) {
        c.send(x, 1, 7);
        return x;
    }

    @Compile
    static Tensor compiled(Comm c, Tensor x, int index) {
        return CASES.get(index).action().apply(c, x);
    }

    /** Runs row {@code c} on this rank (inside {@code @Compile} if {@code compiled}) and checks the outcome. */
    public static void check(Case c, Comm world, boolean compiled) {
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
        Throwable thrown = null;
        try {
            if (compiled) {
                compiled(world, x, CASES.indexOf(c));
            } else {
                c.action().apply(world, x);
            }
        } catch (RuntimeException e) {
            thrown = e;
        }
        if (c.failsOn().test(world.rank())) {
            assertStartsAtLine(thrown, "CommErrorCases.java", c.line(), c.fragment());
            if (c.mismatched()) {
                assertThat(thrown.getMessage()).contains("schedule mismatch on world", "f32[4] at CommErrorCases.java:");
            }
        } else {
            assertThat(thrown).as("%s on rank %d", c, world.rank()).isNull();
        }
    }

    /**
     * {@code e} is a {@link WeftException} whose message starts with {@code file:line: } and contains
     * {@code fragment}.
     */
    public static void assertStartsAtLine(Throwable e, String file, int line, String fragment) {
        assertThat(e).isInstanceOf(WeftException.class);
        assertThat(e.getMessage()).startsWith(file + ":" + line + ": ").contains(fragment);
    }
}
