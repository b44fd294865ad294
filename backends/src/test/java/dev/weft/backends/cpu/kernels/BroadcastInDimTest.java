package dev.weft.backends.cpu.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code broadcastInDim} against element-by-element indexing, on shapes that take each of the strided copy's paths:
 * leading axes repeated into a dense result by doubling (a bias over a batch, over several leading axes, a size-1
 * axis in the middle, a count that is not a power of two), a repeated last axis (a column: rows shorter than 32
 * elements by a loop, longer ones by doubling, at lengths that are and are not powers of two), a scalar.
 */
class BroadcastInDimTest {
    static Stream<Arguments> shapes() {
        return Stream.of(
                Arguments.of(new long[] {512}, new int[] {1}, new long[] {128, 512}),
                Arguments.of(new long[] {7}, new int[] {2}, new long[] {3, 5, 7}),
                Arguments.of(new long[] {1, 4}, new int[] {1, 2}, new long[] {6, 3, 4}),
                Arguments.of(new long[] {4, 1, 3}, new int[] {1, 2, 3}, new long[] {2, 4, 5, 3}),
                Arguments.of(new long[] {6}, new int[] {0}, new long[] {6, 5}),
                Arguments.of(new long[] {6}, new int[] {0}, new long[] {6, 32}),
                Arguments.of(new long[] {5}, new int[] {0}, new long[] {5, 100}),
                Arguments.of(new long[] {3, 4}, new int[] {0, 1}, new long[] {3, 4, 65}),
                Arguments.of(new long[] {128}, new int[] {0}, new long[] {128, 512}),
                Arguments.of(new long[] {}, new int[] {}, new long[] {3, 4}),
                Arguments.of(new long[] {5}, new int[] {1}, new long[] {1, 5}),
                Arguments.of(new long[] {2, 3}, new int[] {0, 2}, new long[] {2, 9, 3}));
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void everyElementIsItsSourceElement(long[] inDims, int[] map, long[] outDims) {
        for (DType t : new DType[] {DType.F32, DType.F64, DType.BOOL}) {
            long n = Arrays.stream(inDims).reduce(1, Math::multiplyExact);
            long m = Arrays.stream(outDims).reduce(1, Math::multiplyExact);
            MemorySegment in = Arena.ofAuto().allocate(n * t.byteSize());
            for (long i = 0; i < n; i++) {
                Scalars.setLong(t, in, i, t == DType.BOOL ? i % 2 : i + 1);
            }
            MemorySegment out = Arena.ofAuto().allocate(m * t.byteSize());
            DataMovement.broadcastInDim(t, in, inDims, map, outDims, out);
            long[] expected = new long[(int) m];
            long[] index = new long[outDims.length];
            for (int e = 0; e < m; e++) {
                long rest = e;
                for (int ax = outDims.length - 1; ax >= 0; ax--) {
                    index[ax] = rest % outDims[ax];
                    rest /= outDims[ax];
                }
                long source = 0;
                for (int i = 0; i < inDims.length; i++) {
                    source = source * inDims[i] + (inDims[i] == 1 ? 0 : index[map[i]]);
                }
                expected[e] = (long) Scalars.getDouble(t, in, source);
            }
            long[] actual = new long[(int) m];
            for (int e = 0; e < m; e++) {
                actual[e] = (long) Scalars.getDouble(t, out, e);
            }
            assertThat(actual).as("%s %s -> %s", t, Arrays.toString(inDims), Arrays.toString(outDims))
                    .isEqualTo(expected);
        }
    }
}
