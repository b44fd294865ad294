package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.Communicator;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.spi.SourceLocation;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Programs that go wrong on purpose, run under {@code mpirun} by {@link MpiFaultTest}.
 * <ul>
 *   <li>{@code throw}: rank 1 throws while rank 0 waits in a receive that never matches; the job must end.</li>
 *   <li>{@code errors DIR}: rank 1 provokes errors (a truncated and a short receive, a request waited on
 *       another communicator and waited twice, through {@code Comm} and through the runtime's
 *       {@code Communicator}), and writes, for each, the exception's message and the line
 *       of the program frame that made the call ({@code <message>|<line>}) to {@code DIR/errors.txt}; last, a
 *       barrier from a thread other than the one that initialised MPI (at the default thread level); then bound
 *       allreduces (as a compiled program runs them) on a buffer too small, on a heap segment and from that other
 *       thread.</li>
 *   <li>{@code deadlock DIR}: both ranks receive first, a real deadlock, which the test interrupts.</li>
 *   <li>{@code kill DIR}: rank 0 waits in an allreduce and rank 1 in a receive; the test kills rank 1.</li>
 *   <li>{@code exit N}: rank 1 calls {@code System.exit(N)} while rank 0 waits in an allreduce.</li>
 *   <li>{@code exitAll}: every rank calls {@code System.exit(0)} after its last collective, a correct end.</li>
 *   <li>{@code trace}: tracing a {@code @Compile} method fails with a shape error on rank 1 only, while rank 0 runs
 *       it into its allreduce.</li>
 *   <li>{@code oom}: rank 1 runs out of memory allocating a tensor while rank 0 waits in an allreduce.</li>
 *   <li>{@code requests}: rank 0 starts a million sends to rank 1, waits for none of them, and then both ranks
 *       enter a barrier.</li>
 *   <li>{@code neverWaited}: rank 0 starts five sends that rank 1 receives, waits for none of them, and both
 *       ranks end normally.</li>
 * </ul>
 * The programs given a {@code DIR} write {@code DIR/rank<r>.pid}, this rank's process id, just before they block.
 */
public final class FaultPrograms {
    private FaultPrograms() {
    }

    public static void main(String[] args) throws IOException {
        Weft.install();
        Comm world = Comm.world();
        switch (args[0]) {
            case "throw" -> throwOnRankOne(world);
            case "errors" -> errors(world, Path.of(args[1]));
            case "deadlock" -> {
                waiting(Path.of(args[1]), world.rank());
                world.recv(DType.F32, new long[] {1}, 1 - world.rank(), 0);
            }
            case "kill" -> {
                waiting(Path.of(args[1]), world.rank());
                if (world.rank() == 0) {
                    world.allreduce(Tensor.of(new double[] {1}), ReduceOp.SUM);
                } else {
                    world.recv(DType.F32, new long[] {1}, 0, 0);
                }
            }
            case "exit" -> {
                if (world.rank() == 1) {
                    System.exit(Integer.parseInt(args[1]));
                }
                world.allreduce(Tensor.of(new double[] {1}), ReduceOp.SUM);
            }
            case "exitAll" -> {
                System.out.println("sum = " + world.allreduce(Tensor.of(new double[] {1}), ReduceOp.SUM).item());
                System.exit(0);
            }
            case "trace" -> sumOfRankOneTooLong(world, Tensor.of(new double[] {1, 2}));
            case "oom" -> {
                if (world.rank() == 1) {
                    Tensor.zeros(DType.F64, 1L << 47); // 1 PiB, beyond the address space: mmap fails
                }
                world.allreduce(Tensor.of(new double[] {1}), ReduceOp.SUM);
            }
            case "requests" -> {
                if (world.rank() == 0) {
                    Tensor x = Tensor.ones(DType.F32, 1);
                    for (int i = 0; i < 1_000_000; i++) {
                        world.isend(x, 1, 0);
                    }
                }
                world.barrier();
            }
            case "neverWaited" -> {
                for (int i = 0; i < 5; i++) {
                    if (world.rank() == 0) {
                        world.isend(Tensor.of(new int[] {i}), 1, 0);
                    } else {
                        world.recv(DType.I32, new long[] {1}, 0, 0);
                    }
                }
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /** Rank 1 adds a 3-vector to a 2-vector: a shape error while tracing, on that rank only. */
    @Compile
    static Tensor sumOfRankOneTooLong(Comm world, Tensor x) {
        Tensor mine = world.rank() == 1 ? x.add(Tensor.ones(DType.F64, 3)) : x;
        return world.allreduce(mine, ReduceOp.SUM);
    }

    /** Writes {@code dir/rank<rank>.pid} (through a rename, so that a reader never sees it half written). */
    private static void waiting(Path dir, int rank) throws IOException {
        String pid = Long.toString(ProcessHandle.current().pid());
        Path tmp = Files.writeString(dir.resolve("rank" + rank + ".tmp"), pid);
        Files.move(tmp, dir.resolve("rank" + rank + ".pid"), StandardCopyOption.ATOMIC_MOVE);
    }

    private static void throwOnRankOne(Comm world) {
        if (world.rank() == 1) {
            throw new IllegalStateException("rank 1 fails on purpose");
        }
        world.recv(DType.F32, new long[] {1}, 1, 0);
    }

    private static final dev.weft.backends.comm.RuntimeReduceOp SUM = dev.weft.backends.comm.RuntimeReduceOp.SUM;

    private static void errors(Comm world, Path dir) throws IOException {
        Tensor four = Tensor.of(new double[] {1, 2, 3, 4});
        List<String> lines = new ArrayList<>();
        if (world.rank() == 0) {
            world.send(four, 1, 1);
            world.send(four, 1, 2);
        } else if (world.rank() == 1) {
            lines.add(failure(() -> world.recv(DType.F64, new long[] {2}, 0, 1)));
            lines.add(failure(() -> world.recv(DType.F64, new long[] {8}, 0, 2)));
            Comm other = world.dup();
            Request r = other.irecv(DType.F64, new long[] {1}, 1, 9);
            lines.add(failure(() -> world.wait(r)));
            other.send(Tensor.of(new double[] {5}), 1, 9);
            other.wait(r);
            lines.add(failure(() -> other.wait(r)));
            Communicator c = (Communicator) world.handle();
            Communicator d = (Communicator) other.handle();
            MemorySegment buf = Arena.ofAuto().allocate(8);
            dev.weft.backends.comm.PendingRequest mine = d.isend(buf, DType.F64, 1, 1, 10, SourceLocation.capture());
            lines.add(failure(() -> c.wait(mine, SourceLocation.capture())));
            d.wait(mine, SourceLocation.capture());
            lines.add(failure(() -> d.wait(mine, SourceLocation.capture())));
            d.recv(buf, DType.F64, 1, 1, 10, SourceLocation.capture());
            lines.add(failure(() -> onAnotherThread(world::barrier)));
            MemorySegment two = Arena.ofAuto().allocate(16);
            lines.add(failure(() -> c.bindAllreduce(DType.F64, 2, SUM, SourceLocation.capture()).accept(buf, two)));
            lines.add(failure(() -> c.bindAllreduce(DType.F64, 2, SUM, SourceLocation.capture()).accept(two,
                    MemorySegment.ofArray(new double[2]))));
            lines.add(failure(() -> onAnotherThread(
                    () -> c.bindAllreduce(DType.F64, 2, SUM, SourceLocation.capture()).accept(two, two))));
            Files.write(dir.resolve("errors.txt"), lines);
        }
        if (world.rank() != 1) {
            world.dup();
        }
        world.barrier();
    }

    /** Runs {@code call} on a new thread named "other" and rethrows what it threw. */
    private static void onAnotherThread(Runnable call) {
        RuntimeException[] thrown = new RuntimeException[1];
        Thread t = new Thread(() -> {
            try {
                call.run();
            } catch (RuntimeException e) {
                thrown[0] = e;
            }
        }, "other");
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        if (thrown[0] != null) {
            throw thrown[0];
        }
    }

    /** Runs {@code call}, which must throw; returns the message and the line in this file that made the call. */
    private static String failure(Runnable call) {
        try {
            call.run();
        } catch (WeftException e) {
            int line = -1;
            for (StackTraceElement f : e.getStackTrace()) {
                if (f.getClassName().equals(FaultPrograms.class.getName())) {
                    line = f.getLineNumber();
                    break;
                }
            }
            return e.getMessage().replace('\n', ' ') + "|" + line;
        }
        throw new AssertionError("no exception");
    }
}
