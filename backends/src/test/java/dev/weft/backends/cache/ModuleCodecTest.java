package dev.weft.backends.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.comm.Comm;
import dev.weft.comm.Received;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Graph;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.ModuleCodec;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBinding;
import dev.weft.tracer.Tracer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A module decoded from its bytes prints as the original and encodes to the same bytes, before and after the
 * pipeline, with constants, loops and communication; bytes that are not a module are an
 * {@link IllegalArgumentException}; a custom reduce op is not encoded.
 */
class ModuleCodecTest {
    private static final Target CPU = new CpuTarget();
    private static final Aval X = Aval.of(DType.F64, 6, 5);

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static List<Tensor> program(Comm comm, Tensor x) {
        Tensor c = Tensor.arange(DType.F64, 30).mul(0.1).reshape(6, 5);
        Tensor y = Weft.fori(0, 3, x.add(c), (i, v) -> v.mul(0.5).add(v.gt(1).cast(DType.F64)));
        Tensor r = comm.allreduce(y.slice(new long[] {1, 0}, new long[] {5, 5}), ReduceOp.SUM);
        return List.of(r.matmul(y.transpose(1, 0)), comm.bcast(y.sum(0), 1));
    }

    private static void assertRoundTrips(Module m) {
        byte[] bytes = ModuleCodec.encode(m).orElseThrow();
        Module back = ModuleCodec.decode(bytes, CPU.name());
        assertThat(back.toMlir()).isEqualTo(m.toMlir());
        assertThat(ModuleCodec.encode(back).orElseThrow()).isEqualTo(bytes);
        for (int cut : new int[] {0, 3, bytes.length / 2, bytes.length - 1}) {
            assertThatThrownBy(() -> ModuleCodec.decode(Arrays.copyOf(bytes, cut), CPU.name()))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
        assertThatThrownBy(() -> ModuleCodec.decode(longer, CPU.name())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void modulesRoundTripBeforeAndAfterThePipeline() {
        List<Module> modules = Collections.synchronizedList(new ArrayList<>());
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Graph g = Tracer.trace("program", List.of(X), in -> program(Comm.world(), in.getFirst()));
            if (Comm.world().rank() == 0) {
                modules.add(Lowering.lowerOnly(g, CPU));
                modules.add(Lowering.lower(g, CPU, StageListener.NONE));
            }
            return null;
        }));
        assertThat(modules).hasSize(2);
        assertThat(modules.get(1).toMlir()).contains("weft.fusion").contains("weft.mpi.allreduce")
                .contains("weft.counted_loop").contains("weft.last_use");
        modules.forEach(ModuleCodecTest::assertRoundTrips);
    }

    @Test
    void aWildcardReceiveRoundTrips() {
        List<Module> modules = Collections.synchronizedList(new ArrayList<>());
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Graph g = Tracer.trace("any", List.of(X), in -> {
                Received m = Comm.world().recvAny(DType.F64, new long[] {6, 5}, Comm.ANY_SOURCE, 3);
                return List.of(m.tensor().add(in.getFirst()), m.sourceTensor());
            });
            if (Comm.world().rank() == 0) {
                modules.add(Lowering.lower(g, CPU, StageListener.NONE));
            }
            return null;
        }));
        assertThat(modules.getFirst().toMlir()).contains("weft.mpi.recv_any").contains("peer = -1")
                .contains("tag = 3");
        assertRoundTrips(modules.getFirst());
    }

    @Test
    void variableCountsRoundTrip() {
        List<Module> modules = Collections.synchronizedList(new ArrayList<>());
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Graph g = Tracer.trace("v", List.of(X), in -> List.of(Comm.world().allgatherv(
                    in.getFirst().slice(0, 0, 4 - 3 * Comm.world().rank()), new long[] {4, 1})));
            if (Comm.world().rank() == 1) {
                modules.add(Lowering.lower(g, CPU, StageListener.NONE));
            }
            return null;
        }));
        assertThat(modules.getFirst().toMlir()).contains("weft.mpi.allgatherv")
                .contains("counts = array<i64: 4, 1>").contains("count = 5 :");
        assertRoundTrips(modules.getFirst());
    }

    @Test
    void aCustomReduceOpIsNotEncoded() {
        ReduceOp absMax = ReduceOp.custom("absmax", (a, b) -> a.abs().maximum(b.abs()));
        List<Module> modules = Collections.synchronizedList(new ArrayList<>());
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Graph g = Tracer.trace("custom", List.of(X), in -> List.of(Comm.world().allreduce(in.getFirst(), absMax)));
            modules.add(Lowering.lowerOnly(g, CPU));
            return null;
        }));
        assertThat(modules).allSatisfy(m -> assertThat(ModuleCodec.encode(m)).isEmpty());
    }
}
