package dev.weft.backends.gpu.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The PTX GEMM at sizes beyond CUDA's grid limits (65,535 blocks in y and z) and beyond 4 GiB per matrix: the grid
 * is one-dimensional, capped at 2^31-1 blocks, and batch offsets are 64-bit.
 */
class GemmLimitsTest {
    @Test
    void tilesOfEveryBatchFoldIntoGridX() {
        assertThat(GemmKernel.launch(33, 17, 3)).isEqualTo(new Launch(3 * 2 * 3, 1, 1, 16, 16));
        assertThat(GemmKernel.launch(65535 * 16 + 1, 16, 1)).isEqualTo(new Launch(65536, 1, 1, 16, 16));
        assertThat(GemmKernel.launch(16, 16, 65536)).isEqualTo(new Launch(65536, 1, 1, 16, 16));
        assertThat(GemmKernel.launch(16, 16, Integer.MAX_VALUE)).isEqualTo(
                new Launch(Integer.MAX_VALUE, 1, 1, 16, 16));
        assertThat(GemmKernel.launch(0, 5, 1).gridX()).isEqualTo(1);
    }

    @Test
    void moreTilesThanGridXHoldsAreWalkedByTheBlocks() {
        int side = 1 << 20;
        assertThat(GemmKernel.tiles(side, side, 1)).isEqualTo(1L << 32);
        assertThat(GemmKernel.launch(side, side, 1)).isEqualTo(new Launch(Integer.MAX_VALUE, 1, 1, 16, 16));
        String ptx = GemmKernel.generate("big", DType.F32, side, side, 16, 1).ptx();
        assertThat(ptx).containsPattern("setp\\.ge\\.u64 %p\\d+, %rd\\d+, 4294967296;")
                .containsPattern("add\\.s64 (%rd\\d+), \\1, %rd\\d+;\\n    bra L\\d+;");
    }

    /** Each block starts at its own index and strides by the grid: every tile is computed exactly once. */
    @Test
    void theBlockStrideCoversEachTileOnce() {
        long tiles = 10_007;
        for (long grid : new long[] {1, 7, 4096, tiles, tiles + 3}) {
            int[] visits = new int[(int) tiles];
            for (long block = 0; block < grid; block++) {
                for (long t = block; t < tiles; t += grid) {
                    visits[(int) t]++;
                }
            }
            assertThat(visits).containsOnly(1);
        }
    }

    @Test
    void batchOffsetsOfMatricesOfFourGibibytesAndMoreAre64Bit() throws Exception {
        int side = 32768;
        long bytes = 4L * side * side;
        assertThat(bytes).isEqualTo(1L << 32);
        String ptx = GemmKernel.generate("huge", DType.F32, side, side, side, 3).ptx();
        assertThat(ptx).containsPattern("mad\\.lo\\.u64 %rd\\d+, %rd\\d+, " + bytes + ", %rd\\d+;")
                .doesNotContain("mul.wide.u32 %rd", ", " + bytes + ";");
        Immediates.assertFit(ptx);
        String f64 = GemmKernel.generate("rect", DType.F64, 3, 1 << 30, 2, 5).ptx();
        assertThat(f64).contains(", " + 8L * 2 * (1 << 30) + ", ", ", " + 8L * 3 * (1 << 30) + ", ");
        Immediates.assertFit(f64);
        Ptxas.assembleForEachTarget(List.of(GemmKernel.generate("huge", DType.F32, side, side, side, 3)));
    }

    @Test
    void theImmediateCheckCatchesA32BitProductOfAWideSize() {
        assertThatThrownBy(() -> Immediates.assertFit("    mul.wide.u32 %rd2, %r1, 4294967296;\n"))
                .hasMessageContaining("immediate 4294967296 does not fit 32 bits");
        Immediates.assertFit("    mul.wide.u32 %rd2, %r1, 4294967295;\n    mad.lo.u64 %rd1, %rd2, 8589934592, %rd3;\n");
    }
}
