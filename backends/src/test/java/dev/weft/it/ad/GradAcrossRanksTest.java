package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.Jvp;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.Ranks;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;

/**
 * Gradients across ranks follow JAX's varying/invariant rule (as mpi4jax and {@code shard_map} do): the cotangent
 * of a result that is the same on every rank by construction counts once, a {@code replicated} input is one value
 * whose gradient sums every rank's use of it, and a constant computed from the rank on the host varies. Checked
 * against central differences of the one global loss (an invariant result itself, a varying one summed over the
 * ranks), eagerly and compiled.
 */
public class GradAcrossRanksTest {
    private static final double EPS = 1e-6;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Functions of this rank's input; {@code invariant}: the result is the same on every rank by construction. */
    enum Fn {
        ALLREDUCE_TIMES_INPUT(false) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x.sin(), ReduceOp.SUM).mul(x).sum();
            }
        },
        SUM_OF_ALLREDUCE(true) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x, ReduceOp.SUM).sum();
            }
        },
        ALLREDUCE_EXP(true) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x.mul(x), ReduceOp.SUM).exp().sum().div(c.size());
            }
        },
        ALLGATHER(true) {
            Tensor apply(Comm c, Tensor x) {
                return c.allgather(x.exp()).mul(0.5).sin().sum();
            }
        },
        BCAST_TIMES_INPUT(false) {
            Tensor apply(Comm c, Tensor x) {
                return c.bcast(x.sin(), c.size() - 1).mul(x).sum();
            }
        },
        ALLREDUCE_MAX(true) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x.mul(x), ReduceOp.MAX).sum();
            }
        },
        RANK_CONSTANT(false) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x, ReduceOp.SUM).mul(c.rank() + 1).sum();
            }
        },
        RANK_TENSOR(false) {
            Tensor apply(Comm c, Tensor x) {
                return c.allreduce(x, ReduceOp.SUM).mul(c.rankTensor().cast(x.dtype()).add(1)).sum();
            }
        },
        INVARIANT_INSIDE_A_LOOP(false) {
            Tensor apply(Comm c, Tensor x) {
                Tensor s = Weft.fori(0, 3, x, (i, v) -> c.allreduce(v.mul(0.5).sin(), ReduceOp.SUM));
                return s.mul(x).sum();
            }
        },
        LOOP_CARRY_MADE_INVARIANT(true) {
            Tensor apply(Comm c, Tensor x) {
                Tensor zero = Tensor.zeros(x.dtype(), x.shape());
                return Weft.fori(0, 2, zero, (i, v) -> c.allreduce(v.add(x).cos(), ReduceOp.SUM)).sum();
            }
        },
        COND_ON_AN_INVARIANT(true) {
            Tensor apply(Comm c, Tensor x) {
                Tensor s = c.allreduce(x, ReduceOp.SUM);
                return Weft.cond(s.sum().gt(-100), () -> s.mul(s).sum(), () -> s.sum());
            }
        };

        final boolean invariant;

        Fn(boolean invariant) {
            this.invariant = invariant;
        }

        abstract Tensor apply(Comm c, Tensor x);

        /** The one global loss: an invariant result as it is, a varying one summed over the ranks. */
        double total(Comm c, Tensor x) {
            Tensor y = apply(c, x);
            return invariant ? y.item() : c.allreduce(y, ReduceOp.SUM).item();
        }
    }

    static Tensor gradEager(Comm c, Tensor x, Fn fn) {
        return Weft.grad(v -> fn.apply(c, v)).apply(x);
    }

    @Compile
    static Tensor gradCompiled(Comm c, Tensor x, Fn fn) {
        return gradEager(c, x, fn);
    }

    @Ranks({1, 2, 3})
    void everyRanksGradientIsThatOfTheOneGlobalLoss(Comm c) {
        checkGlobalLoss(c);
    }

    /** Every {@link Fn}'s gradient against central differences of its global loss, eager and compiled. */
    public static void checkGlobalLoss(Comm c) {
        for (Fn fn : Fn.values()) {
            Random rnd = new Random(7L * c.rank() + fn.ordinal());
            Tensor x = AdRulesTest.random(new long[] {3}, -1, 1, false, rnd);
            Tensor t = AdRulesTest.random(new long[] {3}, -1, 1, false, rnd);
            double fd = (fn.total(c, x.add(t.mul(EPS))) - fn.total(c, x.sub(t.mul(EPS)))) / (2 * EPS);
            Tensor eager = gradEager(c, x, fn);
            double dot = c.allreduce(eager.mul(t).sum(), ReduceOp.SUM).item();
            assertThat(dot).as(fn + " eager").isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
            assertThat(gradCompiled(c, x, fn).toDoubleArray()).as(fn + " compiled")
                    .containsExactly(eager.toDoubleArray(), within(1e-12));
        }
    }

    @Ranks({1, 2, 3})
    void theGradientOfTheSumOfAnAllreduceIsOnes(Comm c) {
        Tensor x = Tensor.of(new double[] {c.rank(), -1, 2.5});
        assertThat(gradEager(c, x, Fn.SUM_OF_ALLREDUCE).toDoubleArray()).containsExactly(1, 1, 1);
        assertThat(gradCompiled(c, x, Fn.SUM_OF_ALLREDUCE).toDoubleArray()).containsExactly(1, 1, 1);
    }

    /** allreduce(x)·(rank + 1) varies: every rank's result counts, so d/dx_r = Σ_s (s + 1) = n(n + 1)/2. */
    @Ranks({1, 2, 3})
    void aConstantComputedFromTheRankVaries(Comm c) {
        checkRankConstant(c);
    }

    /** allreduce(x)·(rank + 1) under grad, vjp and jvp. */
    public static void checkRankConstant(Comm c) {
        int n = c.size();
        Tensor x = Tensor.of(new double[] {1, 2});
        double expected = n * (n + 1) / 2.0;
        assertThat(gradEager(c, x, Fn.RANK_CONSTANT).toDoubleArray()).containsExactly(expected, expected);
        assertThat(gradCompiled(c, x, Fn.RANK_CONSTANT).toDoubleArray()).containsExactly(expected, expected);
        // vjp: the pullback of a cotangent per rank is Σ_s (s + 1) ct_s
        Tensor ct = Tensor.of(new double[] {c.rank() + 0.5, -c.rank()});
        Tensor back = Weft.vjp(in -> List.of(c.allreduce(in.getFirst(), ReduceOp.SUM).mul(c.rank() + 1)), List.of(x))
                .pullback(List.of(ct)).getFirst();
        assertThat(back.toDoubleArray()).containsExactly(c.allreduce(ct.mul(c.rank() + 1), ReduceOp.SUM)
                .toDoubleArray());
        // jvp: the tangent is the allreduce of the tangents, times this rank's constant
        Tensor t = Tensor.of(new double[] {c.rank() + 1, 1});
        Jvp jvp = Weft.jvp(in -> List.of(c.allreduce(in.getFirst(), ReduceOp.SUM).mul(c.rank() + 1)), List.of(x),
                List.of(t));
        assertThat(jvp.tangents().getFirst().toDoubleArray()).containsExactly(c.allreduce(t, ReduceOp.SUM)
                .mul(c.rank() + 1).toDoubleArray());
    }

    /** The transpose of a linear function at {@code x} (JAX's linear_transpose, by reverse mode). */
    static Tensor transpose(java.util.function.UnaryOperator<Tensor> f, Tensor x, Tensor ct) {
        return Weft.vjp(in -> List.of(f.apply(in.getFirst())), List.of(x)).pullback(List.of(ct)).getFirst();
    }

    /** mpi4jax's allreduce transposes: once the identity, twice the allreduce again; its matvec and chain tests. */
    static List<Tensor> mpi4jaxTransposes(Comm c, Tensor arr, Tensor y, Tensor aLocal, Tensor xLocal) {
        java.util.function.UnaryOperator<Tensor> allreduce = v -> c.allreduce(v, ReduceOp.SUM);
        java.util.function.UnaryOperator<Tensor> lt = v -> transpose(allreduce, arr, v);
        java.util.function.UnaryOperator<Tensor> mv = v -> c.allreduce(aLocal.matmul(v), ReduceOp.SUM);
        java.util.function.UnaryOperator<Tensor> mvT = v -> aLocal.transpose().matmul(transpose(allreduce, v, v));
        return List.of(lt.apply(y), transpose(lt, arr, y), transpose(mv, xLocal, y), mvT.apply(y),
                transpose(mvT, y, xLocal),
                Weft.grad((Tensor v) -> c.allreduce(v, ReduceOp.SUM).add(c.allreduce(v, ReduceOp.SUM)).sum())
                        .apply(Tensor.scalar(dev.weft.DType.F64, 0)));
    }

    @Compile
    static List<Tensor> mpi4jaxTransposesCompiled(Comm c, Tensor arr, Tensor y, Tensor aLocal, Tensor xLocal) {
        return mpi4jaxTransposes(c, arr, y, aLocal, xLocal);
    }

    @Ranks({1, 2, 3})
    void transposesAsInMpi4jax(Comm c) {
        checkMpi4jaxTransposes(c);
    }

    /** {@link #mpi4jaxTransposes}, eager and compiled, against the matrices computed whole on every rank. */
    public static void checkMpi4jaxTransposes(Comm c) {
        int n = c.size(), cols = 2 * n;
        Random all = new Random(11);
        Tensor a = AdRulesTest.random(new long[] {5, cols}, -1, 1, false, all);
        Tensor x = AdRulesTest.random(new long[] {cols}, -1, 1, false, all);
        Tensor y = AdRulesTest.random(new long[] {5}, -1, 1, false, all);
        long lo = 2L * c.rank();
        Tensor aLocal = a.slice(new long[] {0, lo}, new long[] {5, lo + 2});
        Tensor xLocal = x.slice(new long[] {lo}, new long[] {lo + 2});
        Tensor arr = Tensor.full(dev.weft.DType.F64, 1, 5);
        Tensor aty = a.transpose().matmul(y).slice(new long[] {lo}, new long[] {lo + 2});
        for (List<Tensor> got : List.of(mpi4jaxTransposes(c, arr, y, aLocal, xLocal),
                mpi4jaxTransposesCompiled(c, arr, y, aLocal, xLocal))) {
            assertThat(got.get(0).toDoubleArray()).containsExactly(y.toDoubleArray());
            assertThat(got.get(1).toDoubleArray()).containsExactly(y.mul(n).toDoubleArray(), within(1e-12));
            assertThat(got.get(2).toDoubleArray()).containsExactly(aty.toDoubleArray(), within(1e-12));
            assertThat(got.get(3).toDoubleArray()).containsExactly(aty.toDoubleArray(), within(1e-12));
            assertThat(got.get(4).toDoubleArray()).containsExactly(a.matmul(x).toDoubleArray(), within(1e-12));
            assertThat(got.get(5).item()).isEqualTo(2.0);
        }
    }

    /** A constant that is the same everywhere keeps the result invariant: its cotangent counts once. */
    @Ranks({2, 3})
    void aConstantTheSameOnEveryRankIsInvariant(Comm c) {
        Tensor x = Tensor.of(new double[] {c.rank(), 1});
        Tensor g = Weft.grad((Tensor v) -> c.allreduce(v, ReduceOp.SUM).mul(Tensor.of(new double[] {2, 3})).sum())
                .apply(x);
        assertThat(g.toDoubleArray()).containsExactly(2, 3);
    }

    /** Least squares split over the ranks, parameters replicated, loss allreduce(local)/rows: the global gradient. */
    static Tensor dataParallelEager(Comm c, Tensor x, Tensor y, Tensor w, double rows) {
        return Weft.grad((Tensor v) -> {
            Tensor r = x.matmul(v).sub(y);
            return c.allreduce(r.mul(r).sum(), ReduceOp.SUM).div(rows);
        }).apply(c.replicated(w));
    }

    @Compile
    static Tensor dataParallelCompiled(Comm c, Tensor x, Tensor y, Tensor w, double rows) {
        return dataParallelEager(c, x, y, w, rows);
    }

    @Ranks({1, 2, 3})
    void replicatedParametersGetTheGradientOfTheGlobalMeanLossOnEveryRank(Comm c) {
        checkDataParallel(c);
    }

    /** The data-parallel gradient with replicated parameters against that of the global mean on one process. */
    public static void checkDataParallel(Comm c) {
        int n = c.size(), local = 4;
        Random all = new Random(3);
        Tensor xs = AdRulesTest.random(new long[] {n * local, 3}, -1, 1, false, all);
        Tensor ys = AdRulesTest.random(new long[] {n * local, 1}, -1, 1, false, all);
        Tensor w = Tensor.of(new double[] {0.5, -1, 2}, 3, 1);
        long[] from = {(long) c.rank() * local, 0}, to = {(long) (c.rank() + 1) * local, 3};
        Tensor x = xs.slice(from, to), y = ys.slice(from, new long[] {to[0], 1});
        // the reference: the gradient of the mean over every rank's rows, on one process, no communication
        Tensor expected = Weft.grad((Tensor v) -> {
            Tensor r = xs.matmul(v).sub(ys);
            return r.mul(r).sum().div(n * local);
        }).apply(w);
        assertThat(dataParallelEager(c, x, y, w, n * local).toDoubleArray())
                .containsExactly(expected.toDoubleArray(), within(1e-12));
        assertThat(dataParallelCompiled(c, x, y, w, n * local).toDoubleArray())
                .containsExactly(expected.toDoubleArray(), within(1e-12));
    }

    /** A replicated input used the same way on every rank needs no communication: the gradient of one copy. */
    @Ranks({1, 2})
    void aReplicatedInputInAReplicatedComputation(Comm c) {
        Tensor w = Tensor.of(new double[] {1, -2});
        assertThat(Weft.grad((Tensor v) -> v.mul(v).sum()).apply(c.replicated(w)).toDoubleArray())
                .containsExactly(2, -4);
    }

    /** Under WEFT_CHECK=strict the ranks compare what is declared replicated. */
    @Ranks({2})
    void strictChecksReplicatedValues(Comm c) {
        String old = System.getProperty("weft.check");
        c.barrier();
        System.setProperty("weft.check", "strict");
        c.barrier();
        try {
            assertThat(c.replicated(Tensor.of(new double[] {1, 2})).toDoubleArray()).containsExactly(1, 2);
            Tensor differs = Tensor.of(new double[] {c.rank()});
            assertThatThrownBy(() -> c.replicated(differs)).isInstanceOf(WeftException.class)
                    .hasMessageContaining("hold different values").hasMessageContaining("GradAcrossRanksTest.java");
        } finally {
            c.barrier();
            if (old == null) {
                System.clearProperty("weft.check");
            } else {
                System.setProperty("weft.check", old);
            }
        }
    }
}
