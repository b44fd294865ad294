package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.spi.NativeMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The results of a collective, computed from every rank's payload once all have arrived. Data payloads are
 * private copies of the ranks' input buffers; results are segments each rank copies into its own output buffer
 * (ranks never touch each other's buffers, so confined segments work).
 */
final class Collectives {
    private Collectives() {
    }

    /**
     * A private copy of the first {@code bytes} of {@code src}, readable from any thread. Not zeroed first: a
     * fresh zero-filled megabyte-sized segment per call was most of a 1-rank training step's allreduce.
     */
    static MemorySegment copyOf(MemorySegment src, long bytes) {
        MemorySegment copy = NativeMemory.allocateUninitialized(bytes).asSlice(0, bytes);
        MemorySegment.copy(src, 0, copy, 0, bytes);
        return copy;
    }

    /** One result per rank: a segment, a {@link Membership}, or null where the rank receives nothing. */
    static Object[] compute(CommGroup group, CollectiveCall call, RuntimeReduceOp op, Object[] payloads) {
        int n = group.size();
        Object[] results = new Object[n];
        switch (call.kind()) {
            case BARRIER, IBARRIER -> {
            }
            case BCAST, IBCAST -> {
                for (int r = 0; r < n; r++) {
                    results[r] = r == call.root() ? null : payloads[call.root()];
                }
            }
            case REDUCE -> results[call.root()] = fold(op, call.dtype(), call.count(), payloads);
            case ALLREDUCE, IALLREDUCE -> Arrays.fill(results, fold(op, call.dtype(), call.count(), payloads));
            case ALLGATHER, IALLGATHER -> {
                long block = call.count() * call.dtype().byteSize();
                MemorySegment all = Arena.ofAuto().allocate(block * n);
                for (int r = 0; r < n; r++) {
                    MemorySegment.copy((MemorySegment) payloads[r], 0, all, r * block, block);
                }
                Arrays.fill(results, all);
            }
            case ALLGATHERV -> {
                long bytes = call.dtype().byteSize();
                MemorySegment all = Arena.ofAuto().allocate(call.offset(n) * bytes);
                for (int r = 0; r < n; r++) {
                    MemorySegment.copy((MemorySegment) payloads[r], 0, all, call.offset(r) * bytes,
                            call.counts().get(r) * bytes);
                }
                Arrays.fill(results, all);
            }
            case REDUCE_SCATTER, IREDUCE_SCATTER -> {
                long block = call.count() * call.dtype().byteSize();
                MemorySegment sum = fold(op, call.dtype(), call.count() * n, payloads);
                for (int r = 0; r < n; r++) {
                    results[r] = sum.asSlice(r * block, block);
                }
            }
            case ALLTOALL, IALLTOALL -> {
                long block = call.count() * call.dtype().byteSize();
                for (int r = 0; r < n; r++) {
                    MemorySegment out = Arena.ofAuto().allocate(block * n);
                    for (int j = 0; j < n; j++) {
                        MemorySegment.copy((MemorySegment) payloads[j], r * block, out, j * block, block);
                    }
                    results[r] = out;
                }
            }
            case SPLIT -> split(group, payloads, results);
            case DUP -> {
                CommGroup dup = new CommGroup(group.name + ".dup#" + group.nextDerivedIndex(), group.worldRanks);
                for (int r = 0; r < n; r++) {
                    results[r] = new Membership(dup, r);
                }
            }
            default -> throw new IllegalArgumentException("fake ranks do not run " + call.kind() + " as a collective");
        }
        return results;
    }

    /**
     * {@code ((x0 ⊕ x1) ⊕ x2) ⊕ ...} in rank order. {@link dev.weft.backends.comm.ReduceFunction} computes
     * {@code inout = in ⊕ inout}, so each step combines the accumulator (left) into the next rank's contribution
     * (right), which becomes the accumulator. Each payload is its rank's private copy, made when it called, so the
     * fold works in place: one rank's allreduce copies nothing more.
     */
    private static MemorySegment fold(RuntimeReduceOp op, DType dtype, long count, Object[] payloads) {
        MemorySegment acc = (MemorySegment) payloads[0];
        for (int r = 1; r < payloads.length; r++) {
            MemorySegment next = (MemorySegment) payloads[r];
            op.combine(next, acc, count, dtype);
            acc = next;
        }
        return acc;
    }

    /** Payloads are {@code int[] {color, key}}; members of a color are ordered by key, then by old rank. */
    private static void split(CommGroup parent, Object[] payloads, Object[] results) {
        int index = parent.nextDerivedIndex();
        Map<Integer, List<Integer>> byColor = new TreeMap<>();
        for (int r = 0; r < payloads.length; r++) {
            byColor.computeIfAbsent(((int[]) payloads[r])[0], c -> new ArrayList<>()).add(r);
        }
        byColor.forEach((color, members) -> {
            members.sort(Comparator.<Integer>comparingInt(r -> ((int[]) payloads[r])[1]).thenComparingInt(r -> r));
            int[] worldRanks = members.stream().mapToInt(r -> parent.worldRanks[r]).toArray();
            CommGroup child = new CommGroup(parent.name + ".split(" + color + ")#" + index, worldRanks);
            for (int i = 0; i < members.size(); i++) {
                results[members.get(i)] = new Membership(child, i);
            }
        });
    }
}
