package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each communication, eager or compiled, is a JFR {@code dev.weft.Comm} event with its fields. */
class CommEventTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor compiledAllreduce(Comm comm, Tensor x) {
        return comm.allreduce(x.add(1), ReduceOp.MAX);
    }

    private static void run() {
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm c = Comm.world();
            Tensor x = Tensor.full(DType.F64, c.rank(), 3);
            assertThat(compiledAllreduce(c, x).toDoubleArray()).containsExactly(2, 2, 2);
            assertThat(c.allreduce(x, ReduceOp.SUM).toDoubleArray()).containsExactly(1, 1, 1);
            return null;
        }));
    }

    @Test
    void eachCommunicationIsAJfrEvent(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("comm.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.weft.Comm");
            recording.start();
            run();
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.weft.Comm")).toList();
        assertThat(events).hasSize(4);
        assertThat(events).allSatisfy(e -> {
            assertThat(e.getString("op")).isEqualTo("allreduce");
            assertThat(e.getString("communicator")).isEqualTo("world");
            assertThat(e.getString("dtype")).isEqualTo("f64");
            assertThat(e.getString("shape")).isEqualTo("[3]");
            assertThat(e.getLong("bytes")).isEqualTo(24);
            assertThat(e.getInt("peer")).isEqualTo(-1);
            assertThat(e.getString("sourceLine")).startsWith("CommEventTest.java:");
            assertThat(e.getEventType().getCategoryNames()).containsExactly("Weft");
        });
        assertThat(events).extracting(e -> e.getInt("rank")).containsExactlyInAnyOrder(0, 0, 1, 1);
        assertThat(events).extracting(e -> e.getBoolean("compiled")).containsExactlyInAnyOrder(true, true, false,
                false);
    }
}
