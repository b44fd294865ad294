package dev.weft.backends.cpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.spi.CommBindings;
import dev.weft.testing.RankRunner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code Weft.fori} loops whose body runs as straight-line code ({@link StraightLoop}) give bit for bit the results
 * of the general path ({@link LoopGenerator}) and of eager execution, on fake ranks; bodies the generator does not
 * handle fall back to the general path.
 */
class StraightLoopTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** The loop: an allreduce then a scale, plus a value captured from outside the loop (a pinned carry). */
    static Tensor allreduceScale(Comm comm, Tensor x, int n) {
        return Weft.fori(0, n, x, (i, acc) -> comm.allreduce(acc, ReduceOp.SUM).mul(1.0 / comm.size()).add(x));
    }

    /** Every dtype the fused loops take, in integer arithmetic that stays exact: {@code (sum + acc) rem 97}. */
    /** An allreduce then a scale, nothing else: the carry is read by the allreduce alone. */
    static Tensor allreduceHalve(Comm comm, Tensor x, int n) {
        return Weft.fori(0, n, x, (i, acc) -> comm.allreduce(acc, ReduceOp.SUM).mul(0.5));
    }

    static Tensor allreduceRem(Comm comm, Tensor x, int n) {
        return Weft.fori(0, n, x, (i, acc) -> comm.allreduce(acc, ReduceOp.SUM).add(acc).rem(97));
    }

    /** Two carries, each next value reading the other's old one, and one carry the body never changes. */
    static List<Tensor> crossed(Comm comm, Tensor a, Tensor b, Tensor c, int n) {
        return Weft.fori(0, n, List.of(a, b, c), (i, v) -> List.of(comm.allreduce(v.get(1), ReduceOp.MAX).mul(0.5),
                v.get(0).add(v.get(1)).mul(0.25).add(v.get(2)), v.get(2)));
    }

    /** A reduction in the body: not a fusion over whole buffers, so the loop runs on the general path. */
    static Tensor withReduction(Comm comm, Tensor x, int n) {
        return Weft.fori(0, n, x, (i, acc) -> comm.allreduce(acc, ReduceOp.SUM).mul(0.5).add(acc.sum()));
    }

    /** Point-to-point messages in the body: not a direct call, so the loop runs on the general path. */
    static Tensor ring(Comm comm, Tensor x, int n) {
        return Weft.fori(0, n, x, (i, acc) -> {
            var out = comm.isend(acc, (comm.rank() + 1) % comm.size(), 3);
            var in = comm.irecv(acc.dtype(), acc.shape(), (comm.rank() + comm.size() - 1) % comm.size(), 3);
            comm.wait(out);
            return comm.wait(in).mul(2);
        });
    }

    /** An integer remainder by zero in the body once the divisor, 3 at first and one less each step, is 0. */
    static List<Tensor> dividing(Comm comm, Tensor x, Tensor d, int n) {
        return Weft.fori(0, n + 3, List.of(x, d), (i, v) -> List.of(comm.allreduce(v.get(0), ReduceOp.SUM)
                .rem(v.get(1)), v.get(1).sub(1)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 7, 100})
    void allreduceThenScaleAgreesWithEagerAndTheGeneralPath(int n) {
        RankRunner.run(3, world -> {
            Tensor x = Tensor.of(new float[] {world.rank() + 1, -2.5f * world.rank(), 0.125f, 1e-3f}, 4);
            List<Tensor> eager = List.of(allreduceScale(world, x, n));
            assertAgree(world, "allreduceScale", List.of(x), n, eager, true);
        });
    }

    /**
     * Fused loops over fewer elements than a vector (the step calls the scalar loop), over enough for the vector
     * loop's warm-up ({@link VectorWarmUp}), and over as many as the executor splits over threads.
     */
    @ParameterizedTest
    @ValueSource(longs = {7, 4133, FusedLoopRunner.PARALLEL_MIN + 3})
    void vectorsOfEverySizeAgree(long size) {
        RankRunner.run(2, world -> {
            Tensor x = Tensor.arange(DType.F32, size).mul(world.rank() + 0.5);
            assertAgree(world, "allreduceScale", List.of(x), 3, List.of(allreduceScale(world, x, 3)), true);
        });
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void everyDtypeAgrees(DType dtype) {
        RankRunner.run(2, world -> {
            Tensor x = Tensor.of(new long[] {world.rank() + 3, 40, -world.rank(), 96, 5}, 5).cast(dtype);
            List<Tensor> eager = List.of(allreduceRem(world, x, 9));
            assertAgree(world, "allreduceRem", List.of(x), 9, eager, true);
        });
    }

    /**
     * The allreduce of a carry that nothing else reads writes its result over the carry from the second iteration
     * on; one whose carry is read again (by the add of {@code allreduceRem}) keeps a buffer of its own.
     */
    @Test
    void anAllreduceWritesOverACarryOnlyWhenNothingElseReadsIt() {
        RankRunner.run(2, world -> {
            Tensor x = Tensor.of(new float[] {1, 2, 3}, 3);
            assertThat(aliased(lower(world, "allreduceScale", List.of(x), 4))).isOne();
            assertThat(aliased(lower(world, "allreduceHalve", List.of(x), 4))).isOne();
            assertThat(aliased(lower(world, "allreduceRem", List.of(x), 4))).isZero();
        });
    }

    /**
     * A donated argument, the loop's initial carry, is written over by the first iteration's allreduce, which then
     * needs no buffer of its own: results agree with eager for every iteration count, the run allocates one buffer
     * less than with the argument kept, and the argument is used up.
     */
    @Test
    void aDonatedCarryIsReducedInPlaceFromTheFirstIteration() {
        RankRunner.run(2, world -> {
            for (int n : new int[] {1, 2, 3, 8}) {
                Tensor x = Tensor.of(new float[] {1.5f, -2, 3.25f, world.rank() + 0.5f, 7}, 5);
                Tensor want = allreduceHalve(world, x, n);
                Module m = lower(world, "allreduceHalve", List.of(x), n);
                CpuExecutable kept = new CpuExecutable(m, registry(m), OpCompilers.standard(), true);
                assertThat(TensorBits.of(kept.run(List.of(x)).getFirst())).isEqualTo(TensorBits.of(want));
                CpuExecutable exe = new CpuExecutable(m, registry(m), OpCompilers.standard(), true);
                Tensor donated = x.add(0.0).donate();
                Tensor got = exe.run(List.of(donated)).getFirst();
                assertThat(TensorBits.of(got)).as("%d iterations, rank %d", n, world.rank())
                        .isEqualTo(TensorBits.of(want));
                assertThat(exe.allocationCount()).isEqualTo(kept.allocationCount() - 1);
                assertThatThrownBy(donated::toFloatArray).isInstanceOf(WeftException.class);
            }
        });
    }

    /** The custom calls of {@code m}, its communication ops on this rank's world. */
    private static CustomCallRegistry registry(Module m) {
        return CustomCallRegistry.of(m, CommBindings.of(List.of(Comm.world().handle())));
    }

    /** How many registers of the first while loop of {@code m}'s main function take a carry's buffer. */
    private static long aliased(Module m) {
        Op loop = m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.WHILE)).findFirst()
                .orElseThrow();
        StraightLoop straight = ControlFlowCompiler.straightLoop(loop,
                new ProgramBuilder(OpCompilers.standard(), registry(m), true)).orElseThrow();
        return Arrays.stream(straight.aliasOf).filter(r -> r >= 0).count();
    }

    @Test
    void severalCarriesAgree() {
        RankRunner.run(2, world -> {
            Tensor a = Tensor.of(new double[] {1, 2, 3}, 3).mul(world.rank() + 1);
            Tensor b = Tensor.of(new double[] {-1, 0.5, 8}, 3).add(world.rank());
            Tensor c = Tensor.of(new double[] {0.25, 0, -3}, 3);
            for (int n : new int[] {0, 1, 2, 5}) {
                assertAgree(world, "crossed", List.of(a, b, c), n, crossed(world, a, b, c, n), true);
            }
        });
    }

    @Test
    void bodiesItDoesNotHandleFallBackToTheGeneralPath() {
        RankRunner.run(2, world -> {
            Tensor x = Tensor.of(new double[] {1, world.rank(), -2}, 3);
            assertAgree(world, "withReduction", List.of(x), 4, List.of(withReduction(world, x, 4)), false);
            assertAgree(world, "ring", List.of(x), 4, List.of(ring(world, x, 4)), false);
        });
    }

    /** A failing op stops the loop with the general path's error, naming the op. */
    @Test
    void aFailingOpFailsAsOnTheGeneralPath() {
        RankRunner.run(2, world -> {
            Tensor x = Tensor.of(new int[] {7, 8}, 2);
            Tensor d = Tensor.of(new int[] {3, 3}, 2);
            Module m = lower(world, "dividing", List.of(x, d), 1);
            assertThat(runsStraight(m)).isTrue();
            List<String> messages = new ArrayList<>();
            for (boolean straight : new boolean[] {true, false}) {
                CpuExecutable exe = new CpuExecutable(m, registry(m), OpCompilers.standard(),
                        straight);
                assertThatThrownBy(() -> exe.run(List.of(x, d))).isInstanceOfSatisfying(WeftException.class,
                        e -> messages.add(e.getMessage())).hasMessageContaining("division by zero");
            }
            assertThat(messages.getFirst()).isEqualTo(messages.getLast());
        });
    }

    /**
     * Runs {@code method} lowered on both paths, twice each (the second run reuses the pooled buffers), and checks
     * them against {@code eager}, bit for bit, and that its loop runs straight exactly when {@code straight}.
     */
    private static void assertAgree(Comm world, String method, List<Tensor> args, int n, List<Tensor> eager,
                                    boolean straight) {
        Module m = lower(world, method, args, n);
        if (n > 0) {
            assertThat(runsStraight(m)).as("%s runs straight", method).isEqualTo(straight);
        }
        for (boolean path : new boolean[] {true, false}) {
            CpuExecutable exe = new CpuExecutable(m, registry(m), OpCompilers.standard(), path);
            for (int run = 0; run < 2; run++) {
                List<Tensor> out = exe.run(args);
                assertThat(out).hasSameSizeAs(eager);
                for (int k = 0; k < out.size(); k++) {
                    assertThat(TensorBits.of(out.get(k))).as("%s result %d, straight %s, run %d, rank %d", method,
                            k, path, run, world.rank()).isEqualTo(TensorBits.of(eager.get(k)));
                }
            }
        }
    }

    /** Whether the first while loop of {@code m}'s main function compiles to straight-line code. */
    static boolean runsStraight(Module m) {
        Op loop = m.main().body().ops().stream().filter(o -> o.name().equals(StableHlo.WHILE)).findFirst()
                .orElseThrow();
        Instruction compiled = ControlFlowCompiler.compileWhile(loop,
                new ProgramBuilder(OpCompilers.standard(), registry(m), true));
        return compiled.getClass().getName().contains("GeneratedStraightLoop");
    }

    private static Module lower(Comm world, String method, List<Tensor> args, int n) {
        List<Object> specs = new ArrayList<>(List.of(world));
        args.forEach(t -> specs.add(TensorSpec.of(t.dtype(), t.shape())));
        specs.add(n);
        return (Module) Weft.lower(StraightLoopTest.class, method, specs.toArray());
    }
}
