package dev.weft.io;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.shard.Sharding;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Checkpoints of trees of tensors on N ranks (torch.distributed.checkpoint's and Orbax's model): each rank writes
 * the blocks of the sharded leaves it holds, rank 0 the replicated leaves and a manifest ({@code manifest.txt}: each
 * leaf's dtype, global shape and blocks), all as {@code .npy} files NumPy reads. {@link #load} assembles each leaf
 * from its blocks and lays it out as the template's leaf is, so a checkpoint saved on 2 ranks loads on 1 or 3, or
 * on another mesh (resharding on load).
 *
 * <p>A save writes into a new directory beside {@code dir} and renames it onto {@code dir} once every rank has
 * written, so an interrupted save leaves the previous checkpoint whole. The directory must be one every rank sees
 * (one host, or a shared file system). A missing, truncated or mismatched file is an error naming the file and the
 * leaf; nothing is returned from a partial load.
 */
public final class Checkpoint {
    private static final String MAGIC = "weft-checkpoint 1";

    private Checkpoint() {
    }

    /**
     * Saves {@code tree} to {@code dir} (replacing a checkpoint there). Collective over {@code comm}: every rank calls
     * it with a tree of the same structure.
     */
    public static void save(Path dir, Object tree, Comm comm) {
        Args.notNull(dir, Checkpoint.class, "save", "dir");
        Args.notNull(tree, Checkpoint.class, "save", "tree");
        Args.notNull(comm, Checkpoint.class, "save", "comm");
        SourceLocation where = SourceLocation.capture();
        List<Tensor> leaves = new ArrayList<>();
        Trees.Structure s = Trees.structure(tree, leaves, "tree", where);
        Path target = dir.toAbsolutePath();
        Path staging = target.resolveSibling(target.getFileName() + ".saving");
        try {
            if (comm.rank() == 0) {
                deleteTree(staging);
                Files.createDirectories(staging);
            }
            comm.barrier();
            StringBuilder manifest = new StringBuilder(MAGIC + "\nstructure " + Trees.describe(s) + "\nleaves "
                    + leaves.size() + "\n");
            for (int k = 0; k < leaves.size(); k++) {
                Tensor leaf = leaves.get(k);
                Sharding sharding = Sharding.of(leaf);
                if (sharding == null) {
                    if (comm.rank() == 0) {
                        Npy.save(staging.resolve("leaf" + k + ".npy"), leaf);
                    }
                    manifest.append("leaf ").append(k).append(' ').append(leaf.dtype().specName()).append(' ')
                            .append(dims(leaf.shape())).append(" blocks 1\nblock ").append(dims(new long[leaf.rank()]))
                            .append(" leaf").append(k).append(".npy\n");
                    continue;
                }
                Tensor block = Sharding.localBlock(leaf);
                Npy.save(staging.resolve("leaf" + k + ".rank" + comm.rank() + ".npy"), block);
                long[] start = sharding.blockStart(leaf.shape());
                long[] starts = comm.allgather(Tensor.of(start, 1, start.length)).toLongArray();
                manifest.append("leaf ").append(k).append(' ').append(leaf.dtype().specName()).append(' ')
                        .append(dims(leaf.shape())).append(" blocks ").append(comm.size()).append('\n');
                for (int r = 0; r < comm.size(); r++) {
                    manifest.append("block ").append(dims(Arrays.copyOfRange(starts, r * start.length,
                            (r + 1) * start.length))).append(" leaf").append(k).append(".rank").append(r)
                            .append(".npy\n");
                }
            }
            comm.barrier();
            if (comm.rank() == 0) {
                Files.writeString(staging.resolve("manifest.txt"), manifest, StandardCharsets.UTF_8);
                Path old = target.resolveSibling(target.getFileName() + ".old");
                deleteTree(old);
                if (Files.exists(target)) {
                    Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
                }
                Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
                deleteTree(old);
            }
            comm.barrier();
        } catch (IOException e) {
            throw new WeftException(where, "Checkpoint.save: cannot write " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * The tree saved in {@code dir}, of {@code template}'s structure: each leaf of the template's dtype and shape
     * (its values ignored) and laid out as the template's leaf is (sharded on this rank's mesh, or whole).
     * Collective over {@code comm} where a template leaf is sharded.
     *
     * @throws WeftException naming the caller's line, the file and the leaf: a missing or malformed manifest or
     *                       block, or a leaf whose dtype or shape differs from the template's
     */
    @SuppressWarnings("unchecked")
    public static <T> T load(Path dir, T template, Comm comm) {
        Args.notNull(dir, Checkpoint.class, "load", "dir");
        Args.notNull(template, Checkpoint.class, "load", "template");
        Args.notNull(comm, Checkpoint.class, "load", "comm");
        SourceLocation where = SourceLocation.capture();
        List<Tensor> want = new ArrayList<>();
        Trees.Structure s = Trees.structure(template, want, "template", where);
        Path manifestFile = dir.resolve("manifest.txt");
        List<String> lines;
        try {
            lines = Files.readAllLines(manifestFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new WeftException(where, "Checkpoint.load: cannot read " + manifestFile + ": " + e.getMessage(), e);
        }
        if (lines.size() < 3 || !lines.get(0).equals(MAGIC) || !lines.get(2).startsWith("leaves ")) {
            throw new WeftException(where, "Checkpoint.load: " + manifestFile + " is not a Weft checkpoint manifest");
        }
        int count = Integer.parseInt(lines.get(2).substring(7).strip());
        if (count != want.size()) {
            throw new ShapeException(where, "Checkpoint.load: " + dir + " holds " + count + " leaves, the template "
                    + Trees.describe(s) + " has " + want.size());
        }
        List<Tensor> out = new ArrayList<>(count);
        int at = 3;
        for (int k = 0; k < count; k++) {
            String[] head = field(lines, at++, manifestFile, where).split(" ");
            Tensor like = want.get(k);
            DType dtype = DType.fromSpecName(head[2]);
            long[] shape = parse(head[3]);
            if (dtype != like.dtype() || !Arrays.equals(shape, like.shape())) {
                throw new ShapeException(where, "Checkpoint.load: leaf " + k + " in " + dir + " is " + head[2]
                        + Arrays.toString(shape) + " but the template's is " + like.dtype().specName()
                        + Arrays.toString(like.shape()));
            }
            int blocks = Integer.parseInt(head[5]);
            Tensor full = Tensor.zeros(dtype, shape);
            for (int b = 0; b < blocks; b++) {
                String[] entry = field(lines, at++, manifestFile, where).split(" ");
                Path file = dir.resolve(entry[2]);
                if (!file.normalize().startsWith(dir.normalize())) {
                    throw new WeftException(where, "Checkpoint.load: " + manifestFile + " names " + entry[2]
                            + ", outside the checkpoint");
                }
                Tensor block;
                try {
                    block = Npy.load(file);
                } catch (WeftException e) {
                    throw new WeftException(where, "Checkpoint.load: leaf " + k + ": " + e.getMessage(), e);
                }
                long[] start = parse(entry[1]);
                checkBlock(k, block, start, dtype, shape, file, where);
                List<Tensor> starts = new ArrayList<>();
                for (long v : start) {
                    starts.add(Tensor.scalar(DType.I64, v));
                }
                full = block.size() == 0 ? full : full.dynamicUpdateSlice(block, starts);
            }
            Sharding sharding = Sharding.of(like);
            out.add(sharding == null ? full : Sharding.put(full, sharding));
        }
        return (T) s.rebuild(out);
    }

    private static void checkBlock(int k, Tensor block, long[] start, DType dtype, long[] shape, Path file,
                                   SourceLocation where) {
        boolean fits = block.dtype() == dtype && block.rank() == shape.length && start.length == shape.length;
        for (int d = 0; fits && d < shape.length; d++) {
            fits = start[d] >= 0 && start[d] + block.shape()[d] <= shape[d];
        }
        if (!fits) {
            throw new ShapeException(where, "Checkpoint.load: leaf " + k + ": " + file + " holds "
                    + block.dtype().specName() + Arrays.toString(block.shape()) + " at " + Arrays.toString(start)
                    + ", which is not a block of " + dtype.specName() + Arrays.toString(shape));
        }
    }

    private static String field(List<String> lines, int i, Path file, SourceLocation where) {
        if (i >= lines.size()) {
            throw new WeftException(where, "Checkpoint.load: " + file + " is truncated (line " + (i + 1) + ")");
        }
        return lines.get(i);
    }

    private static String dims(long[] d) {
        if (d.length == 0) {
            return "-";
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < d.length; i++) {
            b.append(i == 0 ? "" : ",").append(d[i]);
        }
        return b.toString();
    }

    private static long[] parse(String s) {
        return s.equals("-") ? new long[0] : Arrays.stream(s.split(",")).mapToLong(Long::parseLong).toArray();
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path q : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
