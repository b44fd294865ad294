package dev.weft.it.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.io.Npy;
import dev.weft.io.Npz;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code .npy} and {@code .npz} files: every dtype and rank round-trips, NumPy reads what Weft writes and Weft reads
 * what NumPy writes (both byte orders, Fortran order, compressed archives; checked with Debian's python3 and NumPy
 * when installed), and broken or hostile files are errors naming the file, never a partial array. (Saving inside
 * {@code @Compile} is the backends' NpyCompiledTest.)
 */
class NpyTest {
    private static final String PYTHON = "/usr/bin/python3";

    @TempDir
    Path dir;

    static List<Tensor> samples() {
        return List.of(
                Tensor.of(new float[] {1.5f, -2, Float.NaN, Float.POSITIVE_INFINITY, -0f, 1e-40f}, 2, 3),
                Tensor.of(new double[] {Math.PI, -1e300, Double.MIN_VALUE}, 3),
                Tensor.of(new int[] {Integer.MIN_VALUE, 0, 7, Integer.MAX_VALUE}, 2, 1, 2),
                Tensor.of(new long[] {Long.MIN_VALUE, 42}, 2),
                Tensor.of(new boolean[] {true, false, true}, 3),
                Tensor.scalar(DType.F64, 2.25),
                Tensor.zeros(DType.F32, 0, 3));
    }

    @Test
    void everyDtypeAndRankRoundTrips() {
        for (Tensor t : samples()) {
            Path f = dir.resolve("a.npy");
            Npy.save(f, t);
            Tensor back = Npy.load(f);
            assertThat(back.dtype()).isEqualTo(t.dtype());
            assertThat(back.shape()).containsExactly(t.shape());
            assertThat(back.toString()).isEqualTo(t.toString());
        }
        Map<String, Tensor> all = new LinkedHashMap<>();
        for (int i = 0; i < samples().size(); i++) {
            all.put("a" + i, samples().get(i));
        }
        Path z = dir.resolve("all.npz");
        Npz.save(z, all);
        Map<String, Tensor> back = Npz.load(z);
        assertThat(back.keySet()).containsExactlyElementsOf(all.keySet());
        all.forEach((k, v) -> assertThat(back.get(k).toString()).isEqualTo(v.toString()));
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("a.npy", "all.npz");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void numpyReadsWhatWeftWrites() throws Exception {
        assumeNumpy();
        List<Tensor> ts = samples();
        for (int i = 0; i < ts.size(); i++) {
            Npy.save(dir.resolve(i + ".npy"), ts.get(i));
        }
        Map<String, Tensor> named = new LinkedHashMap<>();
        named.put("w", ts.get(0));
        named.put("flags", ts.get(4));
        Npz.save(dir.resolve("z.npz"), named);
        String out = python("""
                import numpy as np, sys
                d = sys.argv[1]
                for i in range(%d):
                    a = np.load(f'{d}/{i}.npy')
                    print(a.dtype.str, a.shape, repr(a.tolist()))
                z = np.load(f'{d}/z.npz')
                print(sorted(z.files), z['w'].dtype.str, z['flags'].tolist())
                """.formatted(ts.size()));
        assertThat(out.lines().toList()).containsExactly(
                "<f4 (2, 3) [[1.5, -2.0, nan, inf, -0.0, 9.99994610111476e-41]]".replace("[[1.5, -2.0, nan]",
                        "x").replace("[[1.5, -2.0, nan, inf, -0.0, 9.99994610111476e-41]]",
                        "[[1.5, -2.0, nan], [inf, -0.0, 9.99994610111476e-41]]"),
                "<f8 (3,) [3.141592653589793, -1e+300, 5e-324]",
                "<i4 (2, 1, 2) [[[-2147483648, 0]], [[7, 2147483647]]]",
                "<i8 (2,) [-9223372036854775808, 42]",
                "|b1 (3,) [True, False, True]",
                "<f8 () 2.25",
                "<f4 (0, 3) []",
                "['flags', 'w'] <f4 [True, False, True]");
    }

    @Test
    void weftReadsWhatNumpyWrites() throws Exception {
        assumeNumpy();
        python("""
                import numpy as np, sys
                d = sys.argv[1]
                a = np.arange(24, dtype='>f8').reshape(2, 3, 4)
                np.save(f'{d}/big.npy', a)
                np.save(f'{d}/fortran.npy', np.asfortranarray(np.arange(6, dtype='<i8').reshape(2, 3)))
                np.save(f'{d}/bool.npy', np.array([[True, False], [False, True]]))
                np.save(f'{d}/scalar.npy', np.float32(-3.5))
                np.save(f'{d}/i4.npy', np.array([-1, 2**31 - 1], dtype=np.int32))
                np.savez_compressed(f'{d}/c.npz', x=np.linspace(0, 1, 5), y=np.eye(2, dtype=np.float32))
                np.save(f'{d}/complex.npy', np.zeros(2, dtype=np.complex128))
                """);
        Tensor big = Npy.load(dir.resolve("big.npy"));
        assertThat(big.dtype()).isEqualTo(DType.F64);
        assertThat(big.shape()).containsExactly(2, 3, 4);
        double[] expect = new double[24];
        Arrays.setAll(expect, i -> i);
        assertThat(big.toDoubleArray()).containsExactly(expect);
        Tensor fortran = Npy.load(dir.resolve("fortran.npy"));
        assertThat(fortran.shape()).containsExactly(2, 3);
        assertThat(fortran.toLongArray()).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(Npy.load(dir.resolve("bool.npy")).toBooleanArray()).containsExactly(true, false, false, true);
        Tensor scalar = Npy.load(dir.resolve("scalar.npy"));
        assertThat(scalar.shape()).isEmpty();
        assertThat(scalar.dtype()).isEqualTo(DType.F32);
        assertThat(scalar.item()).isEqualTo(-3.5);
        assertThat(Npy.load(dir.resolve("i4.npy")).toIntArray()).containsExactly(-1, Integer.MAX_VALUE);
        Map<String, Tensor> c = Npz.load(dir.resolve("c.npz"));
        assertThat(c.get("x").toDoubleArray()).containsExactly(0, 0.25, 0.5, 0.75, 1);
        assertThat(c.get("y").toFloatArray()).containsExactly(1, 0, 0, 1);
        assertThatThrownBy(() -> Npy.load(dir.resolve("complex.npy"))).isInstanceOf(WeftException.class)
                .hasMessageContaining("complex.npy").hasMessageContaining("<c16 has no Weft dtype")
                .hasMessageStartingWith("NpyTest.java:");
    }

    @Test
    void brokenFilesAreErrorsNamingTheFile() throws IOException {
        Path good = dir.resolve("good.npy");
        Npy.save(good, Tensor.of(new double[] {1, 2, 3, 4}, 2, 2));
        byte[] bytes = Files.readAllBytes(good);
        Path truncated = dir.resolve("truncated.npy");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 3));
        assertThatThrownBy(() -> Npy.load(truncated)).isInstanceOf(WeftException.class)
                .hasMessageContaining("truncated.npy is truncated").hasMessageContaining("32 bytes of data");
        Path header = dir.resolve("header.npy");
        Files.write(header, Arrays.copyOf(bytes, 20));
        assertThatThrownBy(() -> Npy.load(header)).hasMessageContaining("header.npy: truncated header");
        Path text = dir.resolve("text.npy");
        Files.writeString(text, "hello, world");
        assertThatThrownBy(() -> Npy.load(text)).hasMessageContaining("text.npy: not a .npy file");
        Path huge = dir.resolve("huge.npy");
        Files.write(huge, withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000000, 1000000), }"));
        assertThatThrownBy(() -> Npy.load(huge)).isInstanceOf(WeftException.class).hasMessageContaining("huge.npy");
        Path negative = dir.resolve("negative.npy");
        Files.write(negative, withHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }"));
        assertThatThrownBy(() -> Npy.load(negative)).hasMessageContaining("negative dimension");
        Path structured = dir.resolve("structured.npy");
        Files.write(structured, withHeader("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }"));
        assertThatThrownBy(() -> Npy.load(structured)).hasMessageContaining("malformed header");
        assertThatThrownBy(() -> Npy.load(dir.resolve("missing.npy"))).isInstanceOf(WeftException.class)
                .hasMessageContaining("cannot read").hasMessageContaining("missing.npy");
        Path notZip = dir.resolve("not.npz");
        Files.writeString(notZip, "PK but not really");
        assertThatThrownBy(() -> Npz.load(notZip)).isInstanceOf(WeftException.class)
                .hasMessageContaining("not.npz");
        assertThatThrownBy(() -> Npz.save(dir.resolve("bad.npz"), Map.of("a/b", Tensor.scalar(DType.F32, 1))))
                .hasMessageContaining("not a plain name");
        assertThat(Files.exists(dir.resolve("bad.npz"))).isFalse();
    }

    /** A .npy file of version 1.0 with {@code dict} as its header and no data. */
    private static byte[] withHeader(String dict) {
        byte[] text = (dict + "\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[10 + text.length];
        System.arraycopy(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}, 0, out, 0, 8);
        out[8] = (byte) text.length;
        out[9] = (byte) (text.length >>> 8);
        System.arraycopy(text, 0, out, 10, text.length);
        return out;
    }

    private static void assumeNumpy() throws Exception {
        assumeTrue(Files.isExecutable(Path.of(PYTHON)), "no " + PYTHON);
        Process p = new ProcessBuilder(PYTHON, "-c", "import numpy").redirectErrorStream(true).start();
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "python3 has no NumPy");
    }

    private String python(String script) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(PYTHON, "-c", script, dir.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
