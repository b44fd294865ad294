package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Reductions split over many blocks when few outputs have many elements: the launch plan, the generated passes, and
 * a CPU model of the order in which the two passes fold the elements.
 */
class ReduceSplitTest {
    @Test
    void blocksPerOutputFillTheGpuWithoutTinyBlocks() {
        assertThat(ReduceKernels.blocksPerOutput(1, 1000)).isEqualTo(1);
        assertThat(ReduceKernels.blocksPerOutput(1, 2048)).isEqualTo(1);
        assertThat(ReduceKernels.blocksPerOutput(1, 2049)).isEqualTo(2);
        assertThat(ReduceKernels.blocksPerOutput(1, 1 << 20)).isEqualTo(512);
        assertThat(ReduceKernels.blocksPerOutput(1, 1L << 40)).isEqualTo(1024);
        assertThat(ReduceKernels.blocksPerOutput(15, 70000)).isEqualTo(35);
        assertThat(ReduceKernels.blocksPerOutput(100, 1_000_000)).isEqualTo(11);
        assertThat(ReduceKernels.blocksPerOutput(1024, 1L << 30)).isEqualTo(1);
        assertThat(ReduceKernels.blocksPerOutput(1, 0)).isEqualTo(1);
    }

    @Test
    void aFullSumOfAMillionElementsRunsOn512BlocksThenOne() {
        ReduceKernels.Reduction r = ReduceKernels.reduce("sum", ElementwiseOp.ADD, DType.F32, new long[] {1 << 20},
                new int[] {0});
        assertThat(r.partials()).isEqualTo(512);
        assertThat(r.passes()).extracting(Kernel::name).containsExactly("sum_partial", "sum");
        assertThat(r.passes()).extracting(Kernel::params).containsExactly(2, 3);
        assertThat(r.passes().get(0).launch()).isEqualTo(new Launch(512, 1, 1, 256, 1));
        assertThat(r.passes().get(1).launch()).isEqualTo(new Launch(1, 1, 1, 256, 1));
        assertThat(r.passes().get(0).ptx()).contains("rem.u64 ", ", 512;", ", " + 512 * 256 + ";");
        assertThat(r.passes().get(1).ptx()).doesNotContain("rem.u64").contains(", 256;");
    }

    @Test
    void manyOutputsKeepOnePassOfOneBlockEach() {
        ReduceKernels.Reduction r = ReduceKernels.reduce("rows", ElementwiseOp.MAX, DType.F64,
                new long[] {5000, 300}, new int[] {1});
        assertThat(r.partials()).isZero();
        assertThat(r.passes()).hasSize(1);
        assertThat(r.passes().getFirst().launch()).isEqualTo(new Launch(5000, 1, 1, 256, 1));
        assertThat(r.passes().getFirst().params()).isEqualTo(3);
    }

    @Test
    void reductionsOfMoreThanFourBillionElementsIndexIn64Bits() {
        long n = 6L << 30;
        List<Kernel> passes = ReduceKernels.reduce("big", ElementwiseOp.ADD, DType.F64, new long[] {3, n / 3},
                new int[] {0, 1}).passes();
        passes.forEach(k -> Immediates.assertFit(k.ptx()));
        assertThat(passes.getFirst().ptx()).contains("setp.ge.u64", ", " + n + ";");
    }

    /**
     * The kernels' order on the CPU: block g of the first pass folds elements g·256 + tid + j·G·256 per thread, a
     * halving tree combines each block's 256 threads, and one block folds the G partials the same way before the
     * init value. Every element is folded once, integer sums are exact, and a float sum stays close to the exact.
     */
    @Test
    void theTwoPassOrderFoldsEveryElementOnce() {
        Random random = new Random(3);
        for (int n : new int[] {1, 255, 2049, 100_003, 1 << 20}) {
            int[] visits = new int[n];
            float[] x = new float[n];
            double exact = 0;
            long intSum = 0;
            for (int i = 0; i < n; i++) {
                x[i] = (float) random.nextGaussian();
                exact += x[i];
                intSum += i % 1000;
            }
            int split = ReduceKernels.blocksPerOutput(1, n);
            float[] partials = new float[split];
            long[] intPartials = new long[split];
            for (int g = 0; g < split; g++) {
                float[] threads = new float[Launch.THREADS];
                long[] intThreads = new long[Launch.THREADS];
                for (int tid = 0; tid < Launch.THREADS; tid++) {
                    for (long r = (long) g * Launch.THREADS + tid; r < n; r += (long) split * Launch.THREADS) {
                        visits[(int) r]++;
                        threads[tid] += x[(int) r];
                        intThreads[tid] += r % 1000;
                    }
                }
                partials[g] = tree(threads);
                intPartials[g] = treeLong(intThreads);
            }
            float[] finish = new float[Launch.THREADS];
            long[] intFinish = new long[Launch.THREADS];
            for (int tid = 0; tid < Launch.THREADS; tid++) {
                for (int r = tid; r < split; r += Launch.THREADS) {
                    finish[tid] += partials[r];
                    intFinish[tid] += intPartials[r];
                }
            }
            float sum = 0f + tree(finish);
            assertThat(visits).as("n = %d", n).containsOnly(1);
            assertThat(0 + treeLong(intFinish)).isEqualTo(intSum);
            assertThat((double) sum).isCloseTo(exact, org.assertj.core.data.Offset.offset(1e-5 * Math.sqrt(n)));
        }
    }

    private static float tree(float[] v) {
        for (int half = v.length / 2; half >= 1; half /= 2) {
            for (int tid = 0; tid < half; tid++) {
                v[tid] += v[tid + half];
            }
        }
        return v[0];
    }

    private static long treeLong(long[] v) {
        for (int half = v.length / 2; half >= 1; half /= 2) {
            for (int tid = 0; tid < half; tid++) {
                v[tid] += v[tid + half];
            }
        }
        return v[0];
    }
}
