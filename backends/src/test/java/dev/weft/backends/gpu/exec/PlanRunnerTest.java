package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.gpu.ptx.Kernel;
import dev.weft.backends.gpu.ptx.Launch;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.lowering.ir.Module;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The executor's walk over a plan, on a recording device without a GPU: which steps read a predicate back to the
 * host (each read is a host synchronisation) and what is queued.
 */
class PlanRunnerTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /**
     * Queues nothing; records launches and answers predicates from a script. {@link #log} has launches, flushes
     * and predicate reads in order.
     */
    private static final class RecordingDevice implements PlanRunner.Device {
        final List<String> launched = new ArrayList<>();
        final List<String> log = new ArrayList<>();
        final Map<GpuStep.Constant, DeviceBuffer> constants = new IdentityHashMap<>();
        final List<Boolean> answers = new ArrayList<>();
        int predicates;

        @Override
        public DeviceBuffer constant(GpuStep.Constant c) {
            return constants.computeIfAbsent(c, k -> new DeviceBuffer(null, 1 << 30, c.data().byteSize()));
        }

        @Override
        public void launch(Kernel kernel, DeviceBuffer[] params) {
            launched.add(kernel.name());
            log.add(kernel.name());
        }

        @Override
        public void matmul(GpuStep.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c) {
            launched.add("matmul");
        }

        @Override
        public DeviceBuffer[] customCall(GpuStep.CustomCall c, DeviceBuffer[] operands) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void flush() {
            log.add("flush");
        }

        @Override
        public boolean predicate(DeviceBuffer b) {
            log.add("predicate");
            return answers.get(predicates++);
        }
    }

    private static BufferPool pool() {
        long[] next = {4096};
        return new BufferPool(new BufferPool.Allocator() {
            @Override
            public DeviceBuffer allocate(long bytes) {
                next[0] += bytes;
                return new DeviceBuffer(null, next[0], bytes);
            }

            @Override
            public void free(DeviceBuffer buffer) {
            }
        });
    }

    /** Runs {@code plan} on {@code device}; checks that every buffer is released afterwards. */
    private static PlanRunner run(GpuPlan plan, RecordingDevice device) {
        BufferPool pool = pool();
        Map<DeviceBuffer, Boolean> pinned = new IdentityHashMap<>();
        GpuFrame f = new GpuFrame(plan.slots(), pool, pinned);
        for (int a : plan.main().arguments()) {
            f.define(a, pool.take(64));
        }
        PlanRunner runner = new PlanRunner(device, pool);
        runner.run(plan.main(), f);
        PlanRunner.releaseResults(plan.main(), f);
        assertThat(f.live()).isZero();
        return runner;
    }

    private static GpuPlan plan(String method, Object... args) {
        return GpuPlanner.plan((Module) Weft.lower("gpu", Programs.class, method, args), PtxTarget.DEFAULT);
    }

    @Test
    void aForiLoopNeverReadsItsConditionBack() {
        int steps = 200;
        GpuPlan p = plan("iterate", TensorSpec.of(DType.F32, 5), steps);
        GpuStep.Fori loop = p.main().steps().stream().filter(GpuStep.Fori.class::isInstance).map(GpuStep.Fori.class::cast)
                .findFirst().orElseThrow();
        assertThat(loop.trips()).isEqualTo(steps);
        long perStep = loop.body().steps().stream().filter(GpuStep.Launch.class::isInstance).count();
        assertThat(perStep).isEqualTo(3);
        RecordingDevice device = new RecordingDevice();
        PlanRunner runner = run(p, device);
        assertThat(runner.predicateReads()).isZero();
        assertThat(device.predicates).isZero();
        assertThat(device.launched).hasSize((int) (perStep * steps));
        assertThat(p.kernels()).noneMatch(k -> k.name().contains("compare"));
    }

    @Test
    void aConditionalInsideAForiReadsOnlyItsOwnPredicateEachStep() {
        int steps = 7;
        RecordingDevice device = new RecordingDevice();
        for (int i = 0; i < steps; i++) {
            device.answers.add(i % 2 == 0);
        }
        PlanRunner runner = run(plan("loop", TensorSpec.of(DType.F32, 5), steps), device);
        assertThat(runner.predicateReads()).isEqualTo(steps);
        assertThat(device.launched.stream().filter(n -> n.endsWith("_fusion")).count()).isEqualTo(steps);
    }

    @Test
    void aForiOfZeroStepsPassesItsCarriesThrough() {
        RecordingDevice device = new RecordingDevice();
        GpuPlan p = plan("iterate", TensorSpec.of(DType.F32, 5), 0);
        PlanRunner runner = run(p, device);
        assertThat(runner.predicateReads()).isZero();
        assertThat(device.launched).isEmpty();
    }

    /** A data-dependent while still reads its predicate: once per round and once for the exit. */
    @Test
    void aWhileReadsItsPredicateEveryRound() {
        Kernel test = new Kernel("test", "", 1, Launch.gridStride(1)), work = new Kernel("work", "", 1,
                Launch.gridStride(1));
        BlockPlan cond = new BlockPlan(new int[] {1}, List.of(new GpuStep.Allocate(2, 1),
                new GpuStep.Launch(test, new int[] {1, 2}), new GpuStep.Release(1)), new int[] {2});
        BlockPlan body = new BlockPlan(new int[] {3}, List.of(new GpuStep.Allocate(4, 4),
                new GpuStep.Launch(work, new int[] {3, 4}), new GpuStep.Release(3)), new int[] {4});
        BlockPlan main = new BlockPlan(new int[] {0}, List.of(
                new GpuStep.While(new int[] {0}, cond, body, new int[] {5}), new GpuStep.Release(0)), new int[] {5});
        RecordingDevice device = new RecordingDevice();
        device.answers.addAll(List.of(true, true, true, false));
        PlanRunner runner = run(new GpuPlan(main, 6, List.of(test, work), ""), device);
        assertThat(runner.predicateReads()).isEqualTo(4);
        assertThat(device.launched).containsExactly("test", "work", "test", "work", "test", "work", "test");
        assertThat(device.log).containsExactly("test", "flush", "predicate", "work", "flush",
                "test", "flush", "predicate", "work", "flush", "test", "flush", "predicate", "work", "flush",
                "test", "flush", "predicate");
    }

    /**
     * What custom calls batched (NCCL groups) is flushed after every iteration of a counted loop too, which reads
     * no predicate that could do it: held buffers must not pile up over the iterations.
     */
    @Test
    void aForiFlushesAfterEveryIteration() {
        int steps = 6;
        RecordingDevice device = new RecordingDevice();
        run(plan("iterate", TensorSpec.of(DType.F32, 5), steps), device);
        assertThat(device.log).filteredOn("flush"::equals).hasSize(steps);
        assertThat(device.log.getLast()).isEqualTo("flush");
        for (int i = 1; i < device.log.size(); i++) {
            if (device.log.get(i).equals("flush")) {
                assertThat(device.log.get(i - 1)).as("before flush %d", i).isNotEqualTo("flush");
            }
        }
    }
}
