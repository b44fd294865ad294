package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.gpu.NativeStub;
import dev.weft.backends.gpu.exec.ext.NcclGpuExtension;
import dev.weft.backends.gpu.nccl.NcclLibrary;
import dev.weft.comm.Comm;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBinding;
import dev.weft.spi.CommBindings;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Blocking send and receive on the GPU executor ({@link RecordingCuda}) with the NCCL extension over the NCCL
 * stub, which enforces NCCL's grouping rules: a send followed by a receive is one group, ended before the kernel
 * that reads the received tensor, and the send's buffer is not reused for the receive meanwhile.
 */
class GpuExecutableNcclGroupsTest {
    private static NativeStub nccl;

    @BeforeAll
    static void install() {
        Weft.install();
        nccl = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        System.setProperty(NcclLibrary.LIBRARY_PROPERTY, nccl.file.toString());
    }

    @BeforeEach
    void forgetEarlierTransfers() {
        nccl.control("stub_p2p_reset");
    }

    /** Each rank sends twice its tensor to the next rank before receiving from the previous one. */
    @Compile
    static Tensor shift(Comm comm, Tensor x) {
        int n = comm.size(), r = comm.rank();
        comm.send(x.mul(2), (r + 1) % n, 0);
        return comm.recv(DType.F32, x.shape(), (r + n - 1) % n, 0).add(1);
    }

    /**
     * {@code steps} rounds of sending {@code x} to the next rank and receiving from the previous one, in a counted
     * loop; nothing reads what was received in the loop, so only the end of an iteration can end its group.
     */
    @Compile
    static Tensor rotate(Comm comm, Tensor x, int steps) {
        int n = comm.size(), r = comm.rank();
        return Weft.fori(0, steps, x, (i, c) -> {
            comm.send(x, (r + 1) % n, 0);
            return comm.recv(DType.F32, x.shape(), (r + n - 1) % n, 0);
        });
    }

    /** The executable of {@link #shift} on this thread's rank, with the NCCL extension; flushes noted in the record. */
    private static GpuExecutable shiftOn(RecordingCuda cuda) {
        return on(cuda, (Module) Weft.lower("gpu", GpuExecutableNcclGroupsTest.class, "shift", Comm.world(),
                TensorSpec.of(DType.F32, 4)));
    }

    /** The executable of {@code m} with the NCCL extension; flushes noted in the record. */
    private static GpuExecutable on(RecordingCuda cuda, Module m) {
        NcclGpuExtension ext = new NcclGpuExtension();
        GpuExtension noted = new GpuExtension() {
            @Override
            public Map<String, GpuCustomCallHandler> customCalls(Module module, CommBindings comms,
                                                                 GpuResources resources) {
                return ext.customCalls(module, comms, resources);
            }

            @Override
            public void flush() {
                cuda.note("flush");
                ext.flush();
            }
        };
        return new GpuExecutable(m, CommBindings.of(List.of(Comm.world().handle())), cuda, List.of(noted));
    }

    @Test
    void aSendToSelfAndItsReceiveAreOneGroupEndedBeforeTheKernelThatReadsIt() {
        RecordingCuda cuda = new RecordingCuda();
        FakeWorld.run(1, world -> CommBinding.with(world, () -> {
            try (GpuExecutable exe = shiftOn(cuda)) {
                nccl.reset();
                exe.run(List.of(Tensor.zeros(DType.F32, 4)));
                List<String> calls = nccl.calls().stream().filter(l -> !l.startsWith("ncclCommGetAsync")).toList();
                assertThat(calls).hasSize(4);
                assertThat(calls.get(0)).isEqualTo("ncclGroupStart");
                assertThat(calls.get(1)).startsWith("ncclSend ");
                assertThat(calls.get(2)).startsWith("ncclRecv ");
                assertThat(calls.get(3)).isEqualTo("ncclGroupEnd");
                assertThat(field(calls.get(2), "buf")).as("the receive's buffer is not the send's")
                        .isNotEqualTo(field(calls.get(1), "buf"));
            }
            return null;
        }));
        List<String> launches = cuda.lines().stream().filter(l -> l.startsWith("launch") || l.equals("flush"))
                .toList();
        assertThat(launches).hasSize(3);
        assertThat(launches.get(1)).isEqualTo("flush");
        assertThat(nccl.lines("stub_stuck_ops")).isEmpty();
    }

    @Test
    void aRingOfSendsBeforeReceivesDoesNotHang() {
        FakeWorld.run(3, world -> CommBinding.with(world, () -> {
            try (GpuExecutable exe = shiftOn(new RecordingCuda())) {
                exe.run(List.of(Tensor.zeros(DType.F32, 4)));
            }
            return null;
        }));
        assertThat(nccl.lines("stub_stuck_ops")).isEmpty();
    }

    /** Each iteration of a counted loop ends its group, as the loop reads no predicate that would. */
    @Test
    void everyIterationOfAForiEndsItsGroup() {
        int steps = 4;
        RecordingCuda cuda = new RecordingCuda();
        FakeWorld.run(1, world -> CommBinding.with(world, () -> {
            try (GpuExecutable exe = on(cuda, (Module) Weft.lower("gpu", GpuExecutableNcclGroupsTest.class,
                    "rotate", Comm.world(), TensorSpec.of(DType.F32, 4), steps))) {
                nccl.reset();
                exe.run(List.of(Tensor.zeros(DType.F32, 4)));
                List<String> calls = nccl.calls().stream().filter(l -> !l.startsWith("ncclCommGetAsync")).toList();
                assertThat(calls).hasSize(4 * steps);
                for (int i = 0; i < steps; i++) {
                    assertThat(calls.get(4 * i)).isEqualTo("ncclGroupStart");
                    assertThat(calls.get(4 * i + 3)).isEqualTo("ncclGroupEnd");
                }
            }
            return null;
        }));
        assertThat(cuda.lines()).filteredOn("flush"::equals).hasSize(steps);
        assertThat(nccl.lines("stub_stuck_ops")).isEmpty();
    }

    private static String field(String line, String name) {
        for (String kv : line.split(" ")) {
            if (kv.startsWith(name + "=")) {
                return kv.substring(name.length() + 1);
            }
        }
        throw new IllegalArgumentException(name + " not in " + line);
    }
}
