package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks that every rank of a mesh lays out its sharded tensors the same way: one global dtype and shape and one
 * sharding per tensor. Each rank holds only its block, so ranks that disagree on the global shape (a {@code put}
 * of f32[10] on one rank and f32[12] on another) would otherwise compute on blocks of different arrays and agree on
 * a wrong answer. A collective over the mesh's communicator: one allreduce of a hash and its negation (equal
 * exactly when every rank has the same), and only on a disagreement an allgather of what each rank has.
 */
public final class ShardAgreement {
    private ShardAgreement() {
    }

    /**
     * Checks the tensors of global avals {@code globals} laid out by {@code shardings} ({@code null}: not sharded,
     * skipped), with the other ranks of each of their meshes, in the order the meshes first appear.
     *
     * @param what  what the tensors are, for the message ({@code Sharding.put}, {@code the sharded arguments of m})
     * @throws WeftException at {@code where} on every rank when the ranks disagree, naming what each rank has
     */
    public static void check(String what, List<Aval> globals, List<Sharding> shardings, SourceLocation where) {
        Map<Comm, StringBuilder> byMesh = new LinkedHashMap<>();
        Map<Comm, Mesh> meshes = new LinkedHashMap<>();
        for (int k = 0; k < shardings.size(); k++) {
            Sharding s = shardings.get(k);
            if (s == null || s.mesh().comm().size() < 2) {
                continue;
            }
            Comm comm = s.mesh().comm();
            meshes.putIfAbsent(comm, s.mesh());
            StringBuilder b = byMesh.computeIfAbsent(comm, c -> new StringBuilder());
            b.append(b.isEmpty() ? "" : ", ").append(globals.size() > 1 ? "#" + k + " " : "").append(globals.get(k))
                    .append(" split ").append(s.axes()).append(" over ").append(s.mesh());
        }
        for (Map.Entry<Comm, StringBuilder> e : byMesh.entrySet()) {
            agree(what, meshes.get(e.getKey()), e.getValue().toString(), where);
        }
    }

    private static void agree(String what, Mesh mesh, String mine, SourceLocation where) {
        Comm comm = mesh.comm();
        long h = hash(mine);
        long[] max = comm.allreduce(Tensor.of(new long[] {h, -h}), ReduceOp.MAX).toLongArray();
        if (max[0] == -max[1]) {
            return;
        }
        List<String> all = allgather(comm, mine);
        StringBuilder b = new StringBuilder(what + ": the ranks of " + mesh + " disagree on the global shapes or"
                + " shardings (each rank must pass the same global array):");
        for (int r = 0; r < all.size(); r++) {
            b.append(r == 0 ? " " : "; ").append("rank ").append(r).append(' ').append(all.get(r));
        }
        throw new WeftException(where, b.toString());
    }

    /** Every rank's {@code text}, in rank order. */
    private static List<String> allgather(Comm comm, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int longest = (int) comm.allreduce(Tensor.of(new int[] {bytes.length}), ReduceOp.MAX).toIntArray()[0];
        int[] padded = new int[longest + 1];
        padded[0] = bytes.length;
        for (int i = 0; i < bytes.length; i++) {
            padded[i + 1] = bytes[i];
        }
        int[] gathered = comm.allgather(Tensor.of(padded)).toIntArray();
        List<String> all = new ArrayList<>();
        for (int r = 0; r < comm.size(); r++) {
            int at = r * (longest + 1);
            byte[] theirs = new byte[gathered[at]];
            for (int i = 0; i < theirs.length; i++) {
                theirs[i] = (byte) gathered[at + 1 + i];
            }
            all.add(new String(theirs, StandardCharsets.UTF_8));
        }
        return all;
    }

    /** A 64-bit FNV-1a hash of {@code text}, never {@code Long.MIN_VALUE} (whose negation is itself). */
    private static long hash(String text) {
        long h = 0xcbf29ce484222325L;
        for (byte c : text.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (c & 0xff)) * 0x100000001b3L;
        }
        return h == Long.MIN_VALUE ? 1 : h;
    }
}
