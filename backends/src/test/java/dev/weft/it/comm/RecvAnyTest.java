package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Jvp;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.fake.DeadlockException;
import dev.weft.comm.Comm;
import dev.weft.comm.Received;
import dev.weft.testing.RankRunner;
import dev.weft.testing.Ranks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code recvAny} with {@code ANY_SOURCE} and {@code ANY_TAG} on 2 to 4 fake ranks, eager and compiled (and under
 * mpirun through {@code GradProgram}): rank 0 takes every other rank's messages, each exactly once with its own
 * source, tag and data, whichever sender wins each receive; the messages of one sender arrive in the order sent.
 */
public class RecvAnyTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Message {@code k} of rank {@code r}: {@code [r, k, 10 r + k]}. */
    static Tensor message(int r, int k) {
        return Tensor.of(new double[] {r, k, 10 * r + k}, 3);
    }

    static int tag(int r, int k) {
        return 100 + 10 * r + k;
    }

    /**
     * Every rank but 0 sends rank 0 messages 1 and 2, then, after a barrier, message 3 with tag 9. Rank 0 takes
     * the first 2(n - 1) with {@code recvAny(ANY_SOURCE, ANY_TAG)}, then the tag-9 ones with
     * {@code recvAny(ANY_SOURCE, 9)}, and returns, per receive, the tensor, its source and its tag; the senders
     * return {@code seed}.
     */
    static List<Tensor> fromAny(Comm c, Tensor seed) {
        int n = c.size();
        List<Tensor> out = new ArrayList<>();
        if (c.rank() == 0) {
            for (int i = 0; i < 3 * (n - 1); i++) {
                if (i == 2 * (n - 1)) {
                    c.barrier();
                }
                Received m = c.recvAny(DType.F64, new long[] {3}, Comm.ANY_SOURCE, i < 2 * (n - 1) ? Comm.ANY_TAG : 9);
                out.add(m.tensor().add(seed));
                out.add(m.sourceTensor());
                out.add(m.tagTensor());
            }
            return out;
        }
        send(c, seed, true);
        return List.of(seed);
    }

    /** A sender's three messages to rank 0, with a barrier before the third if {@code barrier}. */
    private static void send(Comm c, Tensor seed, boolean barrier) {
        for (int k = 1; k <= 3; k++) {
            if (k == 3 && barrier) {
                c.barrier();
            }
            c.send(message(c.rank(), k).add(seed), 0, k == 3 ? 9 : tag(c.rank(), k));
        }
    }

    @Compile
    static List<Tensor> fromAnyCompiled(Comm c, Tensor seed) {
        return fromAny(c, seed);
    }

    /**
     * Every rank but 0 sends rank 0 the three messages of {@link #fromAny}, without the barrier; rank 0 takes them
     * from each named source in turn, the last rank first, with {@code ANY_TAG}, and returns what it received. {@code source()} is the named rank, a host
     * int even inside {@code @Compile}.
     */
    static List<Tensor> fromEach(Comm c, Tensor seed) {
        List<Tensor> out = new ArrayList<>();
        if (c.rank() == 0) {
            for (int src = c.size() - 1; src >= 1; src--) {
                for (int k = 1; k <= 3; k++) {
                    Received m = c.recvAny(DType.F64, new long[] {3}, src, Comm.ANY_TAG);
                    if (m.source() != src) {
                        throw new AssertionError("source() " + m.source() + " of a receive from " + src);
                    }
                    out.add(m.tensor().add(seed));
                    out.add(m.sourceTensor());
                    out.add(m.tagTensor());
                }
            }
            return out;
        }
        send(c, seed, false);
        return List.of(seed);
    }

    @Compile
    static List<Tensor> fromEachCompiled(Comm c, Tensor seed) {
        return fromEach(c, seed);
    }

    @Ranks({2, 3, 4})
    void everyMessageIsTakenOnceWithItsSourceTagAndData(Comm c) {
        checkValues(c);
    }

    /** {@link #fromAny} and {@link #fromEach}, eager and compiled, checked on rank 0. */
    public static void checkValues(Comm c) {
        Tensor seed = Tensor.zeros(DType.F64, 3);
        // a barrier after each run: without it a wildcard receive of one run may take a message a rank already sent
        // for the next (MPI allows that match), and the run that needed it then waits forever
        List<List<Tensor>> runs = new ArrayList<>();
        runs.add(fromAny(c, seed));
        c.barrier();
        runs.add(fromAnyCompiled(c, seed));
        c.barrier();
        runs.add(fromEach(c, seed));
        c.barrier();
        runs.add(fromEachCompiled(c, seed));
        for (int run = 0; run < runs.size(); run++) {
            List<Tensor> got = runs.get(run);
            if (c.rank() != 0) {
                assertThat(got).hasSize(1);
                continue;
            }
            int n = c.size();
            assertThat(got).hasSize(9 * (n - 1));
            Set<String> seen = new HashSet<>();
            int[] lastK = new int[n];
            for (int i = 0; i < got.size(); i += 3) {
                int src = got.get(i + 1).toIntArray()[0];
                int tag = got.get(i + 2).toIntArray()[0];
                assertThat(got.get(i + 1).shape()).isEmpty();
                assertThat(src).isBetween(1, n - 1);
                int k = tag == 9 ? 3 : tag - 100 - 10 * src;
                assertThat(k).as("tag %d from rank %d", tag, src).isBetween(1, 3);
                assertThat(got.get(i).toDoubleArray()).as("data of tag %d from rank %d", tag, src)
                        .containsExactly(message(src, k).toDoubleArray());
                assertThat(seen.add(src + "/" + k)).as("message %d of rank %d taken twice", k, src).isTrue();
                // one sender's messages arrive in the order it sent them, wildcard or not
                assertThat(k).as("order of rank %d's messages in run %d", src, run).isGreaterThan(lastK[src]);
                lastK[src] = k;
                if (run < 2) {
                    assertThat(k == 3).as("tag-9 receives come last").isEqualTo(i >= 6 * (n - 1));
                } else {
                    assertThat(src).as("fromEach takes the last rank first").isEqualTo(n - 1 - i / 9);
                }
            }
            assertThat(seen).hasSize(3 * (n - 1));
        }
    }

    @Ranks(2)
    void aReceiveFromProcNullGivesZerosAndMpisStatus(Comm c) {
        Received r = c.recvAny(DType.F32, new long[] {2}, Comm.PROC_NULL, Comm.ANY_TAG);
        assertThat(r.tensor().toFloatArray()).containsExactly(0, 0);
        assertThat(r.source()).isEqualTo(Comm.PROC_NULL);
        assertThat(r.tag()).isEqualTo(Comm.ANY_TAG);
        assertThat(r.sourceTensor().toIntArray()).containsExactly(Comm.PROC_NULL);
    }

    @Compile
    static Tensor wildcardSourceAsInt(Comm c, Tensor x) {
        return x.add(c.recvAny(DType.F32, new long[] {2}, Comm.ANY_SOURCE, 3).source());
    }

    @Compile
    static Tensor wildcardTagAsInt(Comm c, Tensor x) {
        return x.add(c.recvAny(DType.F32, new long[] {2}, 1, Comm.ANY_TAG).tag());
    }

    /** Tracing fails before anything runs, so no rank sends. */
    @Ranks(2)
    void aWildcardsValueAsAnIntInsideCompileIsAnErrorNamingTheLine(Comm c) {
        Tensor x = Tensor.zeros(DType.F32, 2);
        assertThatThrownBy(() -> wildcardSourceAsInt(c, x)).isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("RecvAnyTest.java:")
                .hasMessageContaining("Received.source() of the recvAny with ANY_SOURCE at RecvAnyTest.java:")
                .hasMessageContaining("use sourceTensor()");
        assertThatThrownBy(() -> wildcardTagAsInt(c, x)).isInstanceOf(TracedValueException.class)
                .hasMessageContaining("Received.tag() of the recvAny with ANY_TAG").hasMessageContaining("tagTensor()");
    }

    @Compile
    static Tensor gradFromAnySource(Comm c, Tensor x) {
        return Weft.grad((Tensor v) -> c.recvAny(DType.F64, new long[] {2}, Comm.ANY_SOURCE, 1).tensor().mul(v)
                .sum()).apply(x);
    }

    @Compile
    static Tensor gradWithAnyTag(Comm c, Tensor x) {
        return Weft.grad((Tensor v) -> c.recvAny(DType.F64, new long[] {2}, 1, Comm.ANY_TAG).tensor().mul(v)
                .sum()).apply(x);
    }

    /** Traced on rank 0 alone, failing before it runs: no rank sends. */
    @Ranks(2)
    void differentiatingAWildcardThatCannotBeMatchedIsAnErrorNamingTheLine(Comm c) {
        if (c.rank() != 0) {
            return;
        }
        Tensor x = Tensor.zeros(DType.F64, 2);
        assertThatThrownBy(() -> gradFromAnySource(c, x)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("RecvAnyTest.java:")
                .hasMessageContaining("recvAny from ANY_SOURCE is not differentiable");
        assertThatThrownBy(() -> gradWithAnyTag(c, x)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("RecvAnyTest.java:")
                .hasMessageContaining("recvAny with ANY_TAG has no transpose");
    }

    /** Forward mode through a receive from a named rank with any tag: the tangent is that rank's next message. */
    @Ranks({2, 3})
    void forwardModeThroughANamedSourceWithAnyTag(Comm c) {
        Tensor x = Tensor.of(new double[] {0.5 + c.rank(), -1}, 2);
        Tensor t = Tensor.of(new double[] {1, 2}, 2);
        Jvp j = Weft.jvp(v -> {
            Tensor y = v.get(0);
            if (c.rank() == 0) {
                for (int src = 1; src < c.size(); src++) {
                    y = y.add(c.recvAny(DType.F64, new long[] {2}, src, Comm.ANY_TAG).tensor().mul(src));
                }
            } else {
                c.send(y.mul(y), 0, c.rank());
            }
            return List.of(y);
        }, List.of(x), List.of(t));
        double[] tangent = j.tangents().getFirst().toDoubleArray();
        if (c.rank() == 0) {
            // d/dx0 of x0 + sum_src src * x_src^2 along t on every rank: t + sum_src src * 2 x_src t
            double[] expected = {1, 2};
            for (int src = 1; src < c.size(); src++) {
                expected[0] += src * 2 * (0.5 + src) * 1;
                expected[1] += src * 2 * -1 * 2;
            }
            assertThat(tangent[0]).isCloseTo(expected[0], within(1e-12));
            assertThat(tangent[1]).isCloseTo(expected[1], within(1e-12));
        } else {
            assertThat(tangent).containsExactly(1, 2);
        }
    }

    @Compile
    static Tensor wildcardReceive(Comm c, Tensor x) {
        Received m = c.recvAny(DType.F32, new long[] {2}, Comm.ANY_SOURCE, Comm.ANY_TAG);
        return m.tensor().add(x).add(m.sourceTensor().cast(DType.F32));
    }

    /** Lowered, not run: the cpu target's custom call gives the tensor and the status; NCCL has no wildcards. */
    @Ranks(2)
    void onTheCpuTargetACustomCallWithTwoResultsOnTheGpuAnErrorNamingTheLine(Comm c) throws Exception {
        String cpu = Weft.lower("cpu", RecvAnyTest.class, "wildcardReceive", c, TensorSpec.of(DType.F32, 2))
                .toMlir();
        assertThat(cpu).contains("call_target_name = \"weft.mpi.recv_any\"").contains("peer = -1 : i64, tag = -1 : i64")
                .contains("-> (tensor<2xf32>, tensor<2xi32>, !stablehlo.token)");
        assertParsesWithMlirOpt(cpu);
        assertThatThrownBy(() -> Weft.lower("gpu", RecvAnyTest.class, "wildcardReceive", c,
                TensorSpec.of(DType.F32, 2))).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("RecvAnyTest.java:")
                .hasMessageContaining("recvAny cannot be compiled for the gpu target: NCCL has no receive from any");
    }

    private static void assertParsesWithMlirOpt(String module) throws IOException, InterruptedException {
        Path tool = Stream.of("/usr/bin/mlir-opt-19", "/usr/lib/llvm-19/bin/mlir-opt").map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
        if (tool == null) {
            return;
        }
        Process p = new ProcessBuilder(tool.toString(), "--allow-unregistered-dialect").redirectErrorStream(true)
                .start();
        try (var in = p.getOutputStream()) {
            in.write(module.getBytes(StandardCharsets.UTF_8));
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("weft.mpi.recv_any");
    }

    @Test
    void aWildcardNoRankCanAnswerIsReportedAsADeadlock() {
        assertThatThrownBy(() -> RankRunner.run(2, c -> {
            if (c.rank() == 0) {
                c.recvAny(DType.F32, new long[] {4}, Comm.ANY_SOURCE, Comm.ANY_TAG);
            }
        })).isInstanceOf(AssertionError.class).cause().isInstanceOf(DeadlockException.class)
                .hasMessageContaining("rank 0: blocked in recv_any(4 x f32) on 'world' from any rank tag any at "
                        + "RecvAnyTest.java:");
    }

    @Ranks(2)
    void wildcardsArePeersAndTagsOnlyForRecvAny(Comm c) {
        assertThatThrownBy(() -> c.recv(DType.F32, new long[] {1}, Comm.ANY_SOURCE, 0))
                .isInstanceOf(WeftException.class).hasMessageContaining("peer rank -1 is outside [0, 2)");
        assertThatThrownBy(() -> c.recvAny(DType.F32, new long[] {1}, 2, Comm.ANY_TAG))
                .isInstanceOf(WeftException.class).hasMessageContaining("peer rank 2 is outside [0, 2)");
        assertThatThrownBy(() -> c.recvAny(DType.F32, new long[] {1}, 0, -5))
                .isInstanceOf(WeftException.class).hasMessageContaining("tag -5 is negative");
    }
}
