package dev.weft.backends.gpu.ptx;

/** A kernel's launch shape: grid and block extents and the dynamic shared memory (always 0 here: it is static). */
public record Launch(int gridX, int gridY, int gridZ, int blockX, int blockY) {
    /** Threads per block of the grid-stride kernels. */
    public static final int THREADS = 256;
    /** Most blocks a grid-stride kernel is launched with: several waves on any current GPU, loops do the rest. */
    public static final int MAX_STRIDE_BLOCKS = 4096;

    /** One thread per element, {@link #THREADS} per block, at most {@link #MAX_STRIDE_BLOCKS} blocks. */
    public static Launch gridStride(long elements) {
        long blocks = Math.max(1, Math.min(MAX_STRIDE_BLOCKS, (elements + THREADS - 1) / THREADS));
        return new Launch((int) blocks, 1, 1, THREADS, 1);
    }

    /** One block of {@link #THREADS} threads per output element. */
    public static Launch blockPerOutput(long outputs) {
        if (outputs > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too many outputs for one block each: " + outputs);
        }
        return new Launch((int) outputs, 1, 1, THREADS, 1);
    }
}
