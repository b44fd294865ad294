package dev.weft.it.mpi;

import dev.weft.Tensor;
import dev.weft.spi.NativeMemory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes HELD tensors of ELEMENTS f32 values and keeps them all, drops them, then makes and drops COUNT more one at a
 * time (each copied from one array), and prints {@code baseline <MiB>}, its resident memory ({@code VmRSS} of {@code
 * /proc/self/status}) once Weft has made its first tensor, before the others, and {@code rss <MiB>}, its resident
 * memory at the end. Usage: {@code HELD COUNT ELEMENTS}.
 */
public final class DroppedTensors {
    private DroppedTensors() {
    }

    public static void main(String[] args) throws IOException {
        int held = Integer.parseInt(args[0]);
        int count = Integer.parseInt(args[1]);
        float[] data = new float[Integer.parseInt(args[2])];
        Tensor.of(new float[] {1, 2, 3}, 3);
        System.out.println("baseline " + residentMiB());
        List<Tensor> kept = new ArrayList<>();
        for (int i = 0; i < held; i++) {
            kept.add(Tensor.of(data, data.length));
        }
        kept.clear();
        for (int i = 0; i < count; i++) {
            data[0] = i;
            Tensor.of(data, data.length);
        }
        System.out.println("rss " + residentMiB());
        System.out.println("outstanding MiB " + (NativeMemory.outstandingBytes() >> 20) + ", heap committed MiB "
                + (Runtime.getRuntime().totalMemory() >> 20));
    }

    private static long residentMiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) >> 10;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
