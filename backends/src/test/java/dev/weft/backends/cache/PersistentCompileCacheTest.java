package dev.weft.backends.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.StandardCompilePipeline;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Graph;
import dev.weft.it.Stderr;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.ModuleCodec;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBinding;
import dev.weft.spi.Setting;
import dev.weft.tracer.Tracer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persistent compile cache: a second cache on the same directory (a new process's) reads the optimized module
 * and gives the bits a fresh compile gives; corrupt, truncated and foreign entries are ignored with one warning and
 * replaced; {@code off} keeps none; writers of one key at once leave a whole entry; an unusable directory means no
 * cache and one warning. Every directory is a temporary one.
 */
class PersistentCompileCacheTest {
    private static final Target CPU = new CpuTarget();
    private static final Aval X = Aval.of(DType.F32, 8, 16);
    private static final Aval W = Aval.of(DType.F64, 16, 4);

    @TempDir
    Path dir;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /**
     * Fusion with a comparison, a reduction, a matmul, a counted loop and a constant of 64 elements: most kinds of
     * op and attribute the passes make.
     */
    private static List<Tensor> mixed(List<Tensor> in) {
        Tensor x = in.get(0);
        Tensor w = in.get(1);
        Tensor big = Tensor.arange(DType.F64, 64).mul(0.01).reshape(16, 4);
        Tensor h = x.mul(2).add(1).sin().mul(x.gt(0).cast(DType.F32)).cast(DType.F64);
        Tensor y = h.matmul(w.add(big));
        Tensor loop = Weft.fori(0, 5, y, (i, c) -> c.mul(0.5).add(y.tanh()));
        return List.of(loop, h.sum(1), loop.max());
    }

    private static Graph mixedGraph() {
        return Tracer.trace("mixed", List.of(X, W), PersistentCompileCacheTest::mixed);
    }

    private static Graph otherGraph() {
        return Tracer.trace("other", List.of(X, W), in -> List.of(in.get(0).exp().sum()));
    }

    private static List<Tensor> inputs() {
        return List.of(Tensor.arange(DType.F32, 128).sub(40).mul(0.05f).reshape(8, 16),
                Tensor.arange(DType.F64, 64).mul(-0.03).add(0.7).reshape(16, 4));
    }

    /** The raw bits of every element of every result. */
    private static List<long[]> bits(List<Tensor> results) {
        return results.stream().map(t -> Arrays.stream(t.toDoubleArray()).mapToLong(Double::doubleToRawLongBits)
                .toArray()).toList();
    }

    /** {@code graph} compiled and run without any persistent cache. */
    private static List<long[]> fresh(Graph graph) {
        Module m = Lowering.lower(graph, CPU, StageListener.NONE);
        return bits(CPU.executable(m, dev.weft.prim.CommPrims.bindings(graph.body())).run(inputs()));
    }

    private static List<long[]> cached(PersistentCompileCache cache, Graph graph) {
        return bits(new StandardCompilePipeline(cache).compile(graph, CpuTarget.NAME).run(inputs()));
    }

    private List<Path> entries() throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.sorted().toList();
        }
    }

    @Test
    void aSecondProcessReadsTheEntryAndGetsTheSameBits() throws IOException {
        Graph graph = mixedGraph();
        List<long[]> want = fresh(graph);
        PersistentCompileCache first = new PersistentCompileCache(dir, "test");
        assertThat(cached(first, graph)).containsExactlyElementsOf(want);
        assertThat(first.hits()).isZero();
        assertThat(first.writes()).isOne();
        assertThat(entries()).singleElement().satisfies(p -> assertThat(p.toString()).endsWith(".weftc"));

        PersistentCompileCache second = new PersistentCompileCache(dir, "test");
        assertThat(cached(second, graph)).containsExactlyElementsOf(want);
        assertThat(second.hits()).isOne();
        assertThat(second.writes()).isZero();
        assertThat(second.optimize(Lowering.lowerOnly(graph, CPU)).toMlir())
                .isEqualTo(Lowering.lower(graph, CPU, StageListener.NONE).toMlir());
    }

    @Test
    void ranksCompilingOneCommunicatingProgramAtOnceShareOneEntry() throws IOException {
        PersistentCompileCache[] caches = {new PersistentCompileCache(dir, "test"),
            new PersistentCompileCache(dir, "test")};
        List<List<long[]>> want = Collections.synchronizedList(new ArrayList<>(List.of(List.of(), List.of())));
        List<List<long[]>> got = Collections.synchronizedList(new ArrayList<>(List.of(List.of(), List.of())));
        List<List<long[]>> again = Collections.synchronizedList(new ArrayList<>(List.of(List.of(), List.of())));
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm comm = Comm.world();
            Graph graph = Tracer.trace("reduced", List.of(X, W), in -> List.of(
                    comm.allreduce(in.get(0).mul(3), ReduceOp.SUM).add(in.get(0)),
                    comm.allreduce(in.get(1).matmul(in.get(1).transpose(1, 0)), ReduceOp.MAX)));
            want.set(comm.rank(), fresh(graph));
            got.set(comm.rank(), cached(caches[comm.rank()], graph));
            comm.barrier();
            again.set(comm.rank(), cached(new PersistentCompileCache(dir, "test"), graph));
            return null;
        }));
        for (int r = 0; r < 2; r++) {
            assertThat(got.get(r)).containsExactlyElementsOf(want.get(r));
            assertThat(again.get(r)).containsExactlyElementsOf(want.get(r));
        }
        assertThat(caches[0].writes() + caches[1].writes()).isBetween(1L, 2L);
        assertThat(entries()).hasSize(1);
    }

    @Test
    void corruptTruncatedAndForeignEntriesAreIgnoredWithOneWarning() throws IOException {
        Graph graph = mixedGraph();
        List<long[]> want = fresh(graph);
        PersistentCompileCache writer = new PersistentCompileCache(dir, "test");
        cached(writer, otherGraph());
        Path foreign = entries().getFirst();
        cached(writer, graph);
        Path entry = entries().stream().filter(p -> !p.equals(foreign)).findFirst().orElseThrow();
        byte[] good = Files.readAllBytes(entry);

        PersistentCompileCache reader = new PersistentCompileCache(dir, "test");
        List<Runnable> damages = List.of(
                () -> write(entry, flipped(good, good.length / 2)),
                () -> write(entry, Arrays.copyOf(good, good.length / 3)),
                () -> write(entry, Arrays.copyOf(good, 5)),
                () -> write(entry, read(foreign)));
        String err = Stderr.of(() -> {
            for (Runnable damage : damages) {
                damage.run();
                assertThat(cached(reader, graph)).containsExactlyElementsOf(want);
                assertThat(read(entry)).isEqualTo(good);
            }
        });
        assertThat(reader.hits()).isZero();
        assertThat(reader.writes()).isEqualTo(damages.size());
        assertThat(err.lines().toList()).singleElement().satisfies(l -> assertThat(l)
                .startsWith("weft: ignoring the compile cache entry " + entry).contains("checksum"));
        assertThat(cached(new PersistentCompileCache(dir, "test"), graph)).containsExactlyElementsOf(want);
    }

    /**
     * Keys are checksums, which can collide: an entry under this module's key that holds another lowered module
     * (forged here with the other module's bytes, which is what a collision reads) is not used, and is replaced
     * without a warning.
     */
    @Test
    void anEntryOfAnotherModuleUnderThisKeyIsReplacedNotUsed() throws IOException {
        Graph graph = mixedGraph();
        List<long[]> want = fresh(graph);
        Module other = Lowering.lowerOnly(otherGraph(), CPU);
        byte[] otherIn = ModuleCodec.encode(other).orElseThrow();
        byte[] otherOut = ModuleCodec.encode(Lowering.lower(otherGraph(), CPU, StageListener.NONE)).orElseThrow();
        String identity = PersistentCompileCache.identity(CPU);
        String key = PersistentCompileCache.key(identity,
                ModuleCodec.encode(Lowering.lowerOnly(graph, CPU)).orElseThrow());
        assertThat(key).hasSize(16).isNotEqualTo(PersistentCompileCache.key(identity, otherIn));
        Path entry = dir.resolve(key + ".weftc");
        Files.write(entry, PersistentCompileCache.entry(key, identity, otherIn, otherOut));

        PersistentCompileCache reader = new PersistentCompileCache(dir, "test");
        String err = Stderr.of(() -> assertThat(cached(reader, graph)).containsExactlyElementsOf(want));
        assertThat(err).isEmpty();
        assertThat(reader.hits()).isZero();
        assertThat(reader.writes()).isOne();
        PersistentCompileCache again = new PersistentCompileCache(dir, "test");
        assertThat(cached(again, graph)).containsExactlyElementsOf(want);
        assertThat(again.hits()).isOne();
    }

    @Test
    void offKeepsNoCache() throws IOException {
        String before = System.getProperty(Setting.CACHE_DIR.property());
        try {
            System.setProperty(Setting.CACHE_DIR.property(), dir.toString());
            assertThat(PersistentCompileCache.configured().directory()).isEqualTo(dir);
            System.setProperty(Setting.CACHE_DIR.property(), "OFF");
            assertThat(PersistentCompileCache.configured()).isNull();
            Graph graph = mixedGraph();
            assertThat(bits(new StandardCompilePipeline().compile(graph, CpuTarget.NAME).run(inputs())))
                    .containsExactlyElementsOf(fresh(graph));
            assertThat(entries()).isEmpty();
        } finally {
            if (before == null) {
                System.clearProperty(Setting.CACHE_DIR.property());
            } else {
                System.setProperty(Setting.CACHE_DIR.property(), before);
            }
        }
    }

    @Test
    void threadsWritingOneKeyAtOnceLeaveAWholeEntry() throws Exception {
        Graph graph = mixedGraph();
        String want = Lowering.lower(graph, CPU, StageListener.NONE).toMlir();
        int threads = 4;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 10; round++) {
                for (Path p : entries()) {
                    Files.delete(p);
                }
                List<Future<String>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    PersistentCompileCache own = new PersistentCompileCache(dir, "test");
                    done.add(pool.submit(() -> {
                        Module lowered = Lowering.lowerOnly(graph, CPU);
                        start.await();
                        return own.optimize(lowered).toMlir();
                    }));
                }
                for (Future<String> f : done) {
                    assertThat(f.get()).isEqualTo(want);
                }
                assertThat(entries()).singleElement();
                PersistentCompileCache reader = new PersistentCompileCache(dir, "test");
                assertThat(reader.optimize(Lowering.lowerOnly(graph, CPU)).toMlir()).isEqualTo(want);
                assertThat(reader.hits()).isOne();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anUnusableDirectoryMeansNoCacheAndOneWarning() throws IOException {
        Path inTheWay = Files.writeString(dir.resolve("file"), "not a directory");
        PersistentCompileCache cache = new PersistentCompileCache(inTheWay.resolve("cache"), "WEFT_CACHE_DIR");
        Graph graph = mixedGraph();
        List<long[]> want = fresh(graph);
        String err = Stderr.of(() -> {
            assertThat(cached(cache, graph)).containsExactlyElementsOf(want);
            assertThat(cached(cache, otherGraph())).containsExactlyElementsOf(fresh(otherGraph()));
            assertThat(cached(cache, graph)).containsExactlyElementsOf(want);
        });
        assertThat(cache.writes()).isZero();
        assertThat(err.lines().toList()).singleElement().satisfies(l -> assertThat(l)
                .contains("WEFT_CACHE_DIR").contains("compiling without a persistent compile cache"));
    }

    private static byte[] flipped(byte[] bytes, int at) {
        byte[] b = bytes.clone();
        b[at] ^= 0x10;
        return b;
    }

    private static void write(Path p, byte[] bytes) {
        try {
            Files.write(p, bytes);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
