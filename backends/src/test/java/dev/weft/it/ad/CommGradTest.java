package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Jvp;
import dev.weft.Tensor;
import dev.weft.Vjp;
import dev.weft.Weft;
import dev.weft.ad.AdRules;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Primitive;
import dev.weft.testing.RankRunner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Differentiation through communication on 1 to 4 fake ranks, against central differences of the global function
 * (every rank's input to every rank's output): each rank's JVP tangent against the change of its output when
 * every rank moves its input, and reverse mode by the dot-product test summed over the ranks, under JAX's
 * varying/invariant rule: the cotangent of an invariant result (the same on every rank: an allreduce, allgather or
 * bcast not mixed with varying values) is one value, counted once, and that of a varying result one per rank.
 */
public class CommGradTest {
    private static final double EPS = 1e-6;
    private static final double TOLERANCE = 1e-6;

    /** A function of this rank's input on {@code comm}, and the input's shape given the number of ranks. */
    public record Case(String name, Primitive<?> prim, BiFunction<Comm, Tensor, Tensor> f, int perRank, boolean positive,
                int minRanks, boolean invariant) {
        Case(String name, Primitive<?> prim, BiFunction<Comm, Tensor, Tensor> f, int perRank, boolean positive,
             int minRanks) {
            this(name, prim, f, perRank, positive, minRanks, false);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Rank r's rows in the variable-count gathers and scatters: {@code (r + 1) % 3}, so that rank 2 has none. */
    public static long[] variableRows(Comm c) {
        long[] counts = new long[c.size()];
        for (int r = 0; r < counts.length; r++) {
            counts[r] = (r + 1) % 3;
        }
        return counts;
    }

    /** This rank's send and receive counts of an alltoallv: rank r sends rank j {@code (r + 2j) % 3} rows. */
    public static long[][] exchangedRows(Comm c) {
        long[] send = new long[c.size()], recv = new long[c.size()];
        for (int j = 0; j < send.length; j++) {
            send[j] = (c.rank() + 2L * j) % 3;
            recv[j] = (j + 2L * c.rank()) % 3;
        }
        return new long[][] {send, recv};
    }

    public static List<Case> cases() {
        return List.of(
                new Case("allreduce sum", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x.sin(), ReduceOp.SUM).mul(x), 3,
                        false, 1),
                new Case("allreduce max", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x.mul(x), ReduceOp.MAX), 3,
                        false, 1, true),
                new Case("allreduce min", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x, ReduceOp.MIN).exp(), 3,
                        false, 1, true),
                new Case("allreduce prod", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x, ReduceOp.PROD), 3, true, 1,
                        true),
                new Case("allreduce sum, invariant", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x.sin(), ReduceOp.SUM)
                        .mul(3), 3, false, 1, true),
                new Case("allreduce sum of an invariant value", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(c.allreduce(
                        x, ReduceOp.SUM).exp(), ReduceOp.SUM), 2, false, 1, true),
                new Case("bcast, invariant", CommPrims.BCAST, (c, x) -> c.bcast(x.sin(), c.size() - 1), 3, false, 1,
                        true),
                new Case("allgather", CommPrims.ALLGATHER, (c, x) -> c.allgather(x.exp()).mul(2), 2, false, 1,
                        true),
                new Case("reduceScatter", CommPrims.REDUCE_SCATTER, (c, x) -> c.reduceScatter(x.mul(x), ReduceOp.SUM),
                        -2, false, 1),
                new Case("bcast from the last rank", CommPrims.BCAST, (c, x) -> c.bcast(x.sin(), c.size() - 1).mul(x),
                        3, false, 1),
                new Case("reduce to rank 0", CommPrims.REDUCE, (c, x) -> c.reduce(x.exp(), ReduceOp.SUM, 0).mul(x), 3,
                        false, 1),
                new Case("alltoall", CommPrims.ALLTOALL, (c, x) -> c.alltoall(x.mul(x)).sin(), -2, false, 1),
                new Case("allgatherv", CommPrims.ALLGATHERV, (c, x) -> c.allgatherv(x.slice(0, 0,
                        variableRows(c)[c.rank()]).exp(), variableRows(c)).mul(2), -2, false, 1, true),
                new Case("gatherv to the last rank", CommPrims.GATHERV, (c, x) -> c.gatherv(x.slice(0, 0,
                        variableRows(c)[c.rank()]).exp(), variableRows(c), c.size() - 1).sum().mul(x), -2, false, 1),
                new Case("scatterv from rank 0", CommPrims.SCATTERV, (c, x) -> c.scatterv(x.slice(0, 0,
                        Arrays.stream(variableRows(c)).sum()).sin(), variableRows(c), 0).sum().mul(x), -2, false, 1),
                new Case("alltoallv", CommPrims.ALLTOALLV, (c, x) -> {
                    long[][] counts = exchangedRows(c);
                    Tensor sent = x.slice(0, 0, Arrays.stream(counts[0]).sum());
                    return c.alltoallv(sent.mul(sent), counts[0], counts[1]).sin().sum().mul(x);
                }, -2, false, 1),
                new Case("send and recv around the ring", CommPrims.SEND, CommGradTest::ring, 3, false, 2),
                new Case("recv", CommPrims.RECV, CommGradTest::ring, 2, false, 2),
                new Case("isend and irecv with both neighbours", CommPrims.ISEND, CommGradTest::halo, 3, false, 1),
                new Case("irecv", CommPrims.IRECV, CommGradTest::halo, 2, false, 1),
                new Case("wait", CommPrims.WAIT, CommGradTest::halo, 4, false, 1),
                new Case("iallreduce sum", CommPrims.IALLREDUCE, (c, x) -> c.wait(c.iallreduce(x.sin(), ReduceOp.SUM))
                        .mul(x), 3, false, 1),
                new Case("iallreduce max, invariant", CommPrims.IALLREDUCE, (c, x) -> c.wait(c.iallreduce(x.mul(x),
                        ReduceOp.MAX)), 3, false, 1, true),
                new Case("iallgather", CommPrims.IALLGATHER, (c, x) -> c.wait(c.iallgather(x.exp())).mul(2), 2, false,
                        1, true),
                new Case("ireduceScatter", CommPrims.IREDUCE_SCATTER, (c, x) -> c.wait(c.ireduceScatter(x.mul(x),
                        ReduceOp.SUM)), -2, false, 1),
                new Case("ibcast from the last rank", CommPrims.IBCAST, (c, x) -> c.wait(c.ibcast(x.sin(),
                        c.size() - 1)).mul(x), 3, false, 1),
                new Case("ialltoall", CommPrims.IALLTOALL, (c, x) -> c.wait(c.ialltoall(x.mul(x))).sin(), -2, false, 1),
                new Case("nonblocking collectives in flight together", CommPrims.WAIT_COLLECTIVE,
                        CommGradTest::overlapped, 2, false, 1),
                new Case("sendrecv shift", CommPrims.SENDRECV, (c, x) -> c.sendrecv(x.exp(), (c.rank() + 1) % c.size(),
                        (c.rank() + c.size() - 1) % c.size(), 7).mul(x), 3, false, 1),
                new Case("recvAny from a named rank", CommPrims.RECV_ANY, CommGradTest::ringAny, 2, false, 2));
    }

    /** {@link #ring} receiving with {@code recvAny} from the previous rank, its tag named (reverse mode needs it). */
    private static Tensor ringAny(Comm c, Tensor x) {
        int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
        Tensor got;
        if (c.rank() % 2 == 0) {
            c.send(x.sin(), next, 5);
            got = c.recvAny(x.dtype(), x.shape(), prev, 5).tensor();
        } else {
            got = c.recvAny(x.dtype(), x.shape(), prev, 5).tensor();
            c.send(x.sin(), next, 5);
        }
        return got.mul(x);
    }

    /** Even ranks send then receive, odd ranks the reverse, so that blocking messages never wait on each other. */
    private static Tensor ring(Comm c, Tensor x) {
        int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
        Tensor got;
        if (c.rank() % 2 == 0) {
            c.send(x.sin(), next, 5);
            got = c.recv(x.dtype(), x.shape(), prev, 5);
        } else {
            got = c.recv(x.dtype(), x.shape(), prev, 5);
            c.send(x.sin(), next, 5);
        }
        return got.mul(x);
    }

    /**
     * A sum and a gather in flight together, with computation between the starts and the waits, waited in the other
     * order.
     */
    private static Tensor overlapped(Comm c, Tensor x) {
        Request sum = c.iallreduce(x.sin(), ReduceOp.SUM);
        Request gathered = c.iallgather(x.mul(x));
        Tensor local = x.exp().mul(x);
        Tensor all = c.wait(gathered);
        return c.wait(sum).mul(local).add(all.slice(0, 0, 2).mul(3));
    }

    /** A halo exchange as in Heat: receives from both neighbours started, then sends, then every wait. */
    private static Tensor halo(Comm c, Tensor x) {
        int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
        Request fromPrev = c.irecv(x.dtype(), x.shape(), prev, 1);
        Request fromNext = c.irecv(x.dtype(), x.shape(), next, 2);
        Request toNext = c.isend(x.sin(), next, 1);
        Request toPrev = c.isend(x.mul(x), prev, 2);
        List<Tensor> got = c.waitAll(fromPrev, fromNext, toNext, toPrev);
        return got.get(0).mul(x).add(got.get(1).exp());
    }

    /** Every communication primitive's JVP rule has a case here (dsl's AdRulesTest covers the array primitives). */
    @Test
    void everyCommunicationRuleHasACaseHere() {
        Set<Primitive<?>> covered = new HashSet<>();
        cases().forEach(c -> covered.add(c.prim()));
        List<String> untested = CommPrims.ALL.stream().filter(AdRules::hasJvp).filter(p -> !covered.contains(p))
                .map(Primitive::name).toList();
        assertThat(untested).as("communication primitives with rules but no finite-difference case").isEmpty();
    }

    static List<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (Case c : cases()) {
            for (int n = c.minRanks(); n <= 4; n++) {
                runs.add(Arguments.of(c, n));
            }
        }
        return runs;
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("runs")
    void forwardModeMatchesCentralDifferencesOfTheGlobalFunction(Case c, int n) {
        RankRunner.run(n, comm -> checkForward(c, comm));
    }

    /** This rank's JVP tangent against the central difference of the global function. */
    public static void checkForward(Case c, Comm comm) {
        Random rnd = new Random(31L * comm.rank() + c.name().hashCode());
        Tensor x = input(c, comm, rnd), t = AdRulesTest.random(x.shape(), -1, 1, false, rnd);
        Jvp jvp = Weft.jvp(in -> List.of(c.f().apply(comm, in.getFirst())), List.of(x), List.of(t));
        double[] fd = difference(c, comm, x, t);
        AdRulesTest.assertClose(jvp.tangents().getFirst().toDoubleArray(), fd, TOLERANCE);
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("runs")
    void reverseModeIsTheTransposeSummedOverTheRanks(Case c, int n) {
        RankRunner.run(n, comm -> checkReverse(c, comm));
    }

    /** The dot-product test of this rank's pullback, summed over the ranks, against central differences. */
    public static void checkReverse(Case c, Comm comm) {
        Random rnd = new Random(17L * comm.rank() + c.name().hashCode());
        Tensor x = input(c, comm, rnd), t = AdRulesTest.random(x.shape(), -1, 1, false, rnd);
        Vjp vjp = Weft.vjp(in -> List.of(c.f().apply(comm, in.getFirst())), List.of(x));
        Tensor y = vjp.outputs().getFirst();
        // an invariant result has one cotangent, the same on every rank
        Tensor ct = AdRulesTest.random(y.shape(), -1, 1, false, c.invariant() ? new Random(c.name().hashCode()) : rnd);
        Tensor back = vjp.pullback(List.of(ct)).getFirst();
        double[] fd = difference(c, comm, x, t);
        double mine = dot(ct.toDoubleArray(), fd);
        double lhs = c.invariant() ? mine : comm.allreduce(Tensor.of(new double[] {mine}), ReduceOp.SUM).item();
        double rhs = comm.allreduce(Tensor.of(new double[] {dot(back.toDoubleArray(), t.toDoubleArray())}),
                ReduceOp.SUM).item();
        assertThat(rhs).isCloseTo(lhs, within(TOLERANCE * (1 + Math.abs(lhs))));
    }

    private static Tensor input(Case c, Comm comm, Random rnd) {
        long len = c.perRank() > 0 ? c.perRank() : (long) -c.perRank() * comm.size();
        return AdRulesTest.random(new long[] {len}, c.positive() ? 0.5 : -1, c.positive() ? 1.5 : 1, false, rnd);
    }

    /** The change of this rank's output when every rank moves its input by {@code ±EPS t}. */
    private static double[] difference(Case c, Comm comm, Tensor x, Tensor t) {
        double[] a = c.f().apply(comm, x.add(t.mul(EPS))).toDoubleArray();
        double[] b = c.f().apply(comm, x.sub(t.mul(EPS))).toDoubleArray();
        double[] d = new double[a.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = (a[i] - b[i]) / (2 * EPS);
        }
        return d;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
