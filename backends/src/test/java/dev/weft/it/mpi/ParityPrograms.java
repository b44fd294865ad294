package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.exec.ReduceOps;
import dev.weft.backends.comm.mpi.MpiWorld;
import dev.weft.backends.comm.mpi.MpiWorldProvider;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;

import dev.weft.spi.SourceLocation;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.StringJoiner;

/**
 * Every communication operation, eager and compiled, on the world and on derived communicators, printing one line
 * per result with its exact bits: the same program runs on fake ranks and under {@code mpirun}, and the outputs
 * must be identical. Inputs are small integers and halves, so every sum and product is exact and the result does
 * not depend on the order in which a library associates a reduction. The custom operators {@code first} and
 * {@code last} are associative but not commutative: they show that contributions are combined in rank order.
 *
 * <p>{@code main(DIR)}: runs on {@code Comm.world()} and writes this rank's lines to {@code DIR/rank-<r>.txt};
 * under a launcher also the thread level MPI granted to {@code thread-level-<r>.txt} and the library it loaded
 * to {@code library-<r>.txt}.
 */
public final class ParityPrograms {
    static final ReduceOp FIRST = ReduceOp.custom("first", (a, b) -> a.add(b.mul(0)));
    static final ReduceOp LAST = ReduceOp.custom("last", (a, b) -> b.add(a.mul(0)));
    /** {@code a + b + ab = (a + 1)(b + 1) - 1}: associative and commutative. */
    static final ReduceOp XPLUS = ReduceOp.custom("xplus", (a, b) -> a.mul(b).add(a).add(b));
    private static final DType[] NUMERIC = {DType.F32, DType.F64, DType.I32, DType.I64};

    private ParityPrograms() {
    }

    public static void main(String[] args) throws IOException {
        Weft.install();
        Comm world = Comm.world();
        List<String> lines = run(world);
        Files.write(Path.of(args[0], "rank-" + world.rank() + ".txt"), lines);
        if (MpiWorldProvider.launchedByMpirun()) {
            Files.writeString(Path.of(args[0], "thread-level-" + world.rank() + ".txt"),
                    Integer.toString(MpiWorld.threadLevel()));
            Files.writeString(Path.of(args[0], "library-" + world.rank() + ".txt"), MpiWorld.library());
        }
    }

    /** Runs every program on {@code world}; returns this rank's result lines. */
    static List<String> run(Comm world) {
        List<String> out = new ArrayList<>();
        int r = world.rank();
        int n = world.size();
        out.add("world " + world);
        for (DType t : NUMERIC) {
            eager(world, input(t, r, 2 * n), out);
        }
        eagerBool(world, input(DType.F64, r, 2 * n).gt(0), out);
        eagerPointToPoint(world, input(DType.F64, r, 3), out);
        eagerCustom(world, input(DType.F64, r, 2 * n), out);
        eagerCustom(world, input(DType.I32, r, 2 * n), out);
        for (DType t : NUMERIC) {
            compiled(world, input(t, r, 2 * n), out);
        }
        Tensor x = input(DType.F64, r, 2 * n);
        emit(out, "compiled ring", ring(world, x));
        emit(out, "compiled shift", shift(world, x));
        emit(out, "compiled custom", custom(world, x));
        emit(out, "compiled loops", loops(world, x));
        derived(world, out);
        overlapping(world, out);
        world.barrier();
        return out;
    }

    /**
     * An allreduce whose output starts one element into its input (MPI forbids aliased buffers, so the runtime
     * reduces a copy of the input): rank r holds i32 {@code [10r, 10r+1, 10r+2, 10r+3]} and reduces elements 0..1
     * into 1..2.
     */
    private static void overlapping(Comm world, List<String> out) {
        Communicator c = (Communicator) world.handle();
        MemorySegment seg = Arena.ofAuto().allocate(16);
        for (int i = 0; i < 4; i++) {
            seg.setAtIndex(ValueLayout.JAVA_INT, i, 10 * world.rank() + i);
        }
        c.allreduce(seg.asSlice(0, 8), seg.asSlice(4, 8), DType.I32, 2, ReduceOps.builtin(ReduceOp.SUM),
                SourceLocation.capture());
        out.add("overlapping allreduce = " + Arrays.toString(seg.toArray(ValueLayout.JAVA_INT)));
    }

    /** Rank {@code r}'s input: element {@code i} is a small integer, plus a half for floating-point dtypes. */
    static Tensor input(DType t, int r, int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = (r * 7 + i * 3) % 9 - 4 + (t.isInteger() ? 0 : 0.5 * ((r + i) % 2));
        }
        return Tensor.of(v).cast(t);
    }

    private static void eager(Comm c, Tensor x, List<String> out) {
        String t = x.dtype().specName();
        int right = (c.rank() + 1) % c.size();
        int left = (c.rank() + c.size() - 1) % c.size();
        emit(out, "eager " + t + " allreduce sum", c.allreduce(x, ReduceOp.SUM));
        emit(out, "eager " + t + " allreduce prod", c.allreduce(x, ReduceOp.PROD));
        emit(out, "eager " + t + " allreduce min", c.allreduce(x, ReduceOp.MIN));
        emit(out, "eager " + t + " allreduce max", c.allreduce(x, ReduceOp.MAX));
        emit(out, "eager " + t + " allgather", c.allgather(x));
        emit(out, "eager " + t + " reduce_scatter", c.reduceScatter(x, ReduceOp.SUM));
        emit(out, "eager " + t + " bcast", c.bcast(x, c.size() - 1));
        emit(out, "eager " + t + " reduce", c.reduce(x, ReduceOp.PROD, 0));
        emit(out, "eager " + t + " alltoall", c.alltoall(x));
        emit(out, "eager " + t + " sendrecv", c.sendrecv(x, right, left, 3));
        emit(out, "eager " + t + " iallreduce sum", c.wait(c.iallreduce(x, ReduceOp.SUM)));
        emit(out, "eager " + t + " iallreduce max", c.wait(c.iallreduce(x, ReduceOp.MAX)));
        emit(out, "eager " + t + " iallgather", c.wait(c.iallgather(x)));
        emit(out, "eager " + t + " ireduce_scatter", c.wait(c.ireduceScatter(x, ReduceOp.SUM)));
        emit(out, "eager " + t + " ibcast", c.wait(c.ibcast(x, c.size() - 1)));
        emit(out, "eager " + t + " ialltoall", c.wait(c.ialltoall(x)));
        emit(out, "eager " + t + " variable counts", variableCounts(c, x));
    }

    private static void eagerBool(Comm c, Tensor b, List<String> out) {
        int right = (c.rank() + 1) % c.size();
        int left = (c.rank() + c.size() - 1) % c.size();
        emit(out, "eager i1 allgather", c.allgather(b));
        emit(out, "eager i1 bcast", c.bcast(b, 1 % c.size()));
        emit(out, "eager i1 alltoall", c.alltoall(b));
        emit(out, "eager i1 sendrecv", c.sendrecv(b, right, left, 4));
    }

    /**
     * Rank 0 sends to the last rank (which, when it is rank 0 itself, starts its receive first: a blocking send to
     * itself could never complete); two messages per pair in flight, waited in reverse order; a barrier.
     */
    private static void eagerPointToPoint(Comm c, Tensor x, List<String> out) {
        int last = c.size() - 1;
        if (last == 0) {
            Request in = c.irecv(DType.F64, x.shape(), 0, 5);
            c.send(x, 0, 5);
            emit(out, "eager recv", c.wait(in));
        } else if (c.rank() == 0) {
            c.send(x, last, 5);
        } else if (c.rank() == last) {
            emit(out, "eager recv", c.recv(DType.F64, x.shape(), 0, 5));
        }
        int right = (c.rank() + 1) % c.size();
        int left = (c.rank() + c.size() - 1) % c.size();
        Request s1 = c.isend(x, right, 6);
        Request s2 = c.isend(x.mul(3), right, 6);
        Request r1 = c.irecv(DType.F64, x.shape(), left, 6);
        Request r2 = c.irecv(DType.F64, x.shape(), left, 6);
        emit(out, "eager irecv second", c.wait(r2));
        emit(out, "eager irecv first", c.wait(r1));
        c.waitAll(s2, s1);
        c.barrier();
        emit(out, "eager rank", c.rankTensor());
    }

    private static void eagerCustom(Comm c, Tensor x, List<String> out) {
        String t = x.dtype().specName();
        emit(out, "eager " + t + " allreduce first", c.allreduce(x, FIRST));
        emit(out, "eager " + t + " allreduce last", c.allreduce(x, LAST));
        emit(out, "eager " + t + " allreduce xplus", c.allreduce(x.div(4), XPLUS));
        emit(out, "eager " + t + " reduce last", c.reduce(x, LAST, c.size() - 1));
        emit(out, "eager " + t + " reduce_scatter first", c.reduceScatter(x, FIRST));
    }

    private static void compiled(Comm c, Tensor x, List<String> out) {
        Tensor[] r = collectives(c, x);
        for (int i = 0; i < r.length; i++) {
            emit(out, "compiled " + x.dtype().specName() + " collectives[" + i + "]", r[i]);
        }
        emit(out, "compiled " + x.dtype().specName() + " variable counts", variableCountsCompiled(c, x));
        Tensor[] nb = nonblocking(c, x);
        for (int i = 0; i < nb.length; i++) {
            emit(out, "compiled " + x.dtype().specName() + " nonblocking[" + i + "]", nb[i]);
        }
    }

    /**
     * The nonblocking collectives of {@link #collectives}, all in flight at once (with a blocking one and an
     * ibarrier among them), computation between the starts and the waits, waited in another order: their results are
     * the blocking ones', in the same order.
     */
    @Compile
    static Tensor[] nonblocking(Comm c, Tensor x) {
        Request sum = c.iallreduce(x, ReduceOp.SUM);
        Request max = c.iallreduce(x, ReduceOp.MAX);
        Request gathered = c.iallgather(x);
        Tensor blocking = c.allreduce(x, ReduceOp.MIN);
        Request scattered = c.ireduceScatter(x, ReduceOp.SUM);
        Request barrier = c.ibarrier();
        Request broadcast = c.ibcast(x, c.size() - 1);
        Request exchanged = c.ialltoall(x);
        Tensor local = x.mul(x).add(blocking);
        Tensor[] r = new Tensor[7];
        r[5] = c.wait(exchanged);
        c.wait(barrier);
        r[4] = c.wait(broadcast);
        r[3] = c.wait(scattered);
        r[2] = c.wait(gathered);
        r[1] = c.wait(max);
        r[0] = c.wait(sum);
        r[6] = local;
        return r;
    }

    private static void derived(Comm world, List<String> out) {
        int r = world.rank();
        Tensor x = input(DType.F64, r, 2 * world.size());
        Comm halves = world.split(r % 2, -r);
        out.add("split " + halves);
        emit(out, "split eager allreduce first", halves.allreduce(x, FIRST));
        emit(out, "split eager allgather", halves.allgather(x));
        Tensor[] res = collectives(halves, input(DType.F64, halves.rank(), 2 * halves.size()));
        for (int i = 0; i < res.length; i++) {
            emit(out, "split compiled collectives[" + i + "]", res[i]);
        }
        String mlir = Weft.lower(ParityPrograms.class, "collectives", halves,
                TensorSpec.of(DType.F64, 2L * halves.size())).toMlir();
        mlir.lines().filter(l -> l.contains("custom_call")).forEach(l -> out.add("split mlir " + l.strip()));
        Comm notZero = world.split(r == 0 ? world.size() : 1, r);
        out.add("split with rank 0 alone " + notZero);
        emit(out, "split with rank 0 alone allreduce last", notZero.allreduce(x, LAST));
        Comm dup = world.dup();
        out.add("dup " + dup);
        emit(out, "dup eager alltoall", dup.alltoall(x));
        Comm dupOfHalves = halves.dup();
        out.add("dup of split " + dupOfHalves);
        emit(out, "dup of split compiled custom", custom(dupOfHalves, x));
    }

    @Compile
    static Tensor[] collectives(Comm c, Tensor x) {
        int right = (c.rank() + 1) % c.size();
        int left = (c.rank() + c.size() - 1) % c.size();
        return new Tensor[] {
            c.allreduce(x, ReduceOp.SUM), c.allreduce(x, ReduceOp.MAX), c.allgather(x),
            c.reduceScatter(x, ReduceOp.SUM), c.bcast(x, c.size() - 1), c.reduce(x, ReduceOp.PROD, 0),
            c.alltoall(x), c.sendrecv(x, right, left, 3), c.rankTensor()
        };
    }

    /**
     * The variable-count collectives (MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv, MPI_Alltoallv) on leading elements
     * of {@code x}: rank {@code r} passes {@code (r + 1) % 3} of them to the gathers (so that rank 2 passes none),
     * the scatter from the last rank hands them out so, and rank {@code r} sends {@code (r + j) % 2} to rank {@code j}.
     */
    static Tensor[] variableCounts(Comm c, Tensor x) {
        int n = c.size(), me = c.rank();
        long[] counts = new long[n], send = new long[n], recv = new long[n];
        long total = 0, sent = 0;
        for (int r = 0; r < n; r++) {
            counts[r] = (r + 1) % 3;
            total += counts[r];
            send[r] = (me + r) % 2;
            recv[r] = (r + me) % 2;
            sent += send[r];
        }
        Tensor whole = Tensor.concat(0, x, x, x).slice(0, 0, total);
        return new Tensor[] {c.allgatherv(x.slice(0, 0, counts[me]), counts),
            c.gatherv(x.slice(0, 0, counts[me]), counts, 0), c.scatterv(whole, counts, n - 1),
            c.alltoallv(x.slice(0, 0, sent), send, recv)};
    }

    @Compile
    static Tensor[] variableCountsCompiled(Comm c, Tensor x) {
        return variableCounts(c, x);
    }

    @Compile
    static Tensor ring(Comm c, Tensor x) {
        Request out = c.isend(x, (c.rank() + 1) % c.size(), 7);
        Request in = c.irecv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 7);
        Tensor got = c.wait(in);
        c.wait(out);
        return got.mul(2);
    }

    /**
     * Even ranks send to the right, then receive from the left; odd ranks the other way round. A rank alone starts
     * its receive from itself first: its blocking send could never complete otherwise.
     */
    @Compile
    static Tensor shift(Comm c, Tensor x) {
        int right = (c.rank() + 1) % c.size();
        int left = (c.rank() + c.size() - 1) % c.size();
        if (c.size() == 1) {
            Request in = c.irecv(x.dtype(), x.shape(), 0, 8);
            c.send(x, 0, 8);
            return c.wait(in);
        }
        if (c.rank() % 2 == 0) {
            c.send(x, right, 8);
            return c.recv(x.dtype(), x.shape(), left, 8);
        }
        Tensor got = c.recv(x.dtype(), x.shape(), left, 8);
        c.send(x, right, 8);
        return got;
    }

    @Compile
    static Tensor[] custom(Comm c, Tensor x) {
        return new Tensor[] {
            c.allreduce(x, FIRST), c.allreduce(x, LAST), c.allreduce(x.div(4), XPLUS), c.reduce(x, LAST, c.size() - 1),
            c.reduceScatter(x, FIRST)
        };
    }

    /**
     * Allreduces in {@code Weft.fori} loops, whose operand is a loop invariant and whose token a carry the executor
     * binds once per loop: one that reduces the invariant, one whose accumulator feeds back, one with a custom
     * operator, and the benchmark's allreduce then scale with a second carry (bodies that run as straight-line code).
     */
    @Compile
    static Tensor[] loops(Comm c, Tensor x) {
        List<Tensor> two = Weft.fori(0, 4, List.of(x, x.mul(2)), (i, v) -> List.of(
                c.allreduce(v.get(1), ReduceOp.SUM).mul(1.0 / c.size()), v.get(0).add(x)));
        return new Tensor[] {
            Weft.fori(0, 6, x, (i, acc) -> c.allreduce(x, ReduceOp.SUM)),
            Weft.fori(0, 5, x, (i, acc) -> c.allreduce(acc.add(x), ReduceOp.SUM)),
            Weft.fori(0, 3, x, (i, acc) -> c.allreduce(acc.add(x), LAST).add(c.allreduce(x, FIRST))),
            two.get(0), two.get(1)
        };
    }

    private static void emit(List<String> out, String label, Tensor... ts) {
        for (int i = 0; i < ts.length; i++) {
            out.add(label + (ts.length > 1 ? "[" + i + "]" : "") + " = " + bits(ts[i]));
        }
    }

    /** The tensor's dtype, shape and every element exactly: hex bits for floating point. */
    static String bits(Tensor t) {
        StringJoiner j = new StringJoiner(" ", t.dtype().specName() + Arrays.toString(t.shape()) + " ", "");
        switch (t.dtype()) {
            case F32 -> {
                for (float v : t.toFloatArray()) {
                    j.add(Integer.toHexString(Float.floatToRawIntBits(v)));
                }
            }
            case F64 -> {
                for (double v : t.toDoubleArray()) {
                    j.add(Long.toHexString(Double.doubleToRawLongBits(v)));
                }
            }
            case I32 -> {
                for (int v : t.toIntArray()) {
                    j.add(Integer.toString(v));
                }
            }
            case I64 -> {
                for (long v : t.toLongArray()) {
                    j.add(Long.toString(v));
                }
            }
            case BOOL -> {
                for (boolean v : t.toBooleanArray()) {
                    j.add(v ? "1" : "0");
                }
            }
        }
        return j.toString();
    }
}
