package dev.weft.backends.gpu.exec;

import dev.weft.DType;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.lowering.ir.Op;
import java.lang.foreign.MemorySegment;

/**
 * One step of a {@link BlockPlan}. Slots index the executable's frame of device buffers; a buffer may sit in
 * several slots (a reshape aliases its operand) and goes back to the pool when its last slot is released.
 */
public sealed interface GpuStep {
    /** A fresh buffer of {@code bytes} bytes in {@code slot}. */
    record Allocate(int slot, long bytes) implements GpuStep {
    }

    /** {@code slot} holds the device copy of a constant, uploaded once when the executable is built. */
    record Constant(int slot, MemorySegment data) implements GpuStep {
    }

    /** {@code to} holds {@code from}'s buffer (row-major reshape moves no bytes). */
    record Alias(int from, int to) implements GpuStep {
    }

    /** Launches {@code kernel} on the stream with the buffers of {@code params} as its pointer parameters. */
    record Launch(Kernel kernel, int[] params) implements GpuStep {
    }

    /**
     * Row-major batched matmul of buffers {@code a}, {@code b} into {@code c} (see {@link GpuMatmul}), through
     * the loaded {@link GpuMatmul} when it supports {@code dtype}, else through {@code fallback}.
     */
    record Matmul(DType dtype, int m, int n, int k, int batch, int a, int b, int c, Kernel fallback) implements GpuStep {
    }

    /**
     * A custom call; slots of token operands and results are {@code -1}, {@code resultBytes} gives each tensor
     * result's size.
     */
    record CustomCall(Op op, int[] operands, int[] results, long[] resultBytes) implements GpuStep {
    }

    /**
     * {@code stablehlo.while}: the carries start as {@code operands}; each round binds them to {@code cond}'s
     * arguments, reads its rank-0 predicate back to the host (a one-byte device-to-host copy that waits for the
     * stream), and while true runs {@code body} on them, whose results become the next carries; the last carries
     * end in {@code results}.
     */
    record While(int[] operands, BlockPlan cond, BlockPlan body, int[] results) implements GpuStep {
    }

    /**
     * A counted {@code stablehlo.while} ({@code Weft.fori}'s, see {@link dev.weft.lowering.ir.Attr.CountedLoop}),
     * which runs exactly {@code trips} times whatever the data: like {@link While} but without its condition, so
     * nothing is read back to the host.
     */
    record Fori(int[] operands, BlockPlan body, long trips, int[] results) implements GpuStep {
    }

    /** {@code stablehlo.if}: reads {@code pred} back to the host and runs one branch, whose results fill {@code results}. */
    record If(int pred, BlockPlan onTrue, BlockPlan onFalse, int[] results) implements GpuStep {
    }

    /** Drops {@code slot}'s reference to its buffer (after its last use in the block). */
    record Release(int slot) implements GpuStep {
    }
}
