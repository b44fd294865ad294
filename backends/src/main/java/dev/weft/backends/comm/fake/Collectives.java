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
            case GATHERV -> {
                long bytes = call.dtype().byteSize();
                MemorySegment all = Arena.ofAuto().allocate(call.offset(n) * bytes);
                for (int r = 0; r < n; r++) {
                    MemorySegment.copy((MemorySegment) payloads[r], 0, all, call.offset(r) * bytes,
                            call.counts().get(r) * bytes);
                }
                results[call.root()] = all;
            }
            case SCATTERV -> {
                long bytes = call.dtype().byteSize();
                for (int r = 0; r < n; r++) {
                    results[r] = ((MemorySegment) payloads[call.root()]).asSlice(call.offset(r) * bytes,
                            call.counts().get(r) * bytes);
                }
            }
            case ALLTOALLV -> exchange(payloads, call.dtype().byteSize(), results);
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

    /** A rank's part of an alltoallv: its counts in elements and a copy of its operand. */
    record Exchange(long[] sendCounts, long[] recvCounts, MemorySegment data) {
    }

    /**
     * The alltoallv of the ranks' {@link Exchange}s: rank {@code r} gets, from each rank {@code i} in rank order, the
     * block {@code i} sends it, once every rank's send count to every other agrees with that rank's receive count.
     */
    private static void exchange(Object[] payloads, long bytes, Object[] results) {
        int n = payloads.length;
        Exchange[] parts = new Exchange[n];
        for (int r = 0; r < n; r++) {
            parts[r] = (Exchange) payloads[r];
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (parts[i].sendCounts[j] != parts[j].recvCounts[i]) {
                    throw new IllegalArgumentException(String.format("rank %d sends %d elements to rank %d, which"
                            + " receives %d from it", i, parts[i].sendCounts[j], j, parts[j].recvCounts[i]));
                }
            }
        }
        for (int r = 0; r < n; r++) {
            MemorySegment out = Arena.ofAuto().allocate(Arrays.stream(parts[r].recvCounts).sum() * bytes);
            long at = 0;
            for (int i = 0; i < n; i++) {
                long from = 0;
                for (int j = 0; j < r; j++) {
                    from += parts[i].sendCounts[j];
                }
                long size = parts[i].sendCounts[r] * bytes;
                MemorySegment.copy(parts[i].data, from * bytes, out, at, size);
                at += size;
            }
            results[r] = out;
        }
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
