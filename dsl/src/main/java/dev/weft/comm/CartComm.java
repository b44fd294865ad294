package dev.weft.comm;

import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Args;
import dev.weft.spi.CommHandle;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A communicator with a Cartesian topology (MPI_Cart_create without reordering), made by {@link Comm#cart}: rank
 * {@code r} sits at the row-major coordinates of {@code r} on the grid (the last dimension varies fastest). It is a
 * {@link Comm} of its own (a duplicate: its messages never match the parent's), and its neighbour collectives run
 * on a second private duplicate, so that they never match the user's point-to-point messages on it.
 *
 * <p>Neighbours are in MPI's order: for each dimension, the rank at coordinate −1 and then the one at +1, which is
 * {@link #PROC_NULL} at a closed (non-periodic) edge. The topology is host data: {@link #coords()}, {@link #shift}
 * and {@link #rankOf} run at once (also while tracing, so a compiled program is specialised to its rank's place on
 * the grid). The neighbour collectives are built on {@code sendrecv}, so they run wherever it does (fake ranks, MPI;
 * eager and compiled) and differentiate as it does.
 */
public final class CartComm extends Comm {
    private final int[] dims;
    private final boolean[] periodic;
    private final Comm neighbours;

    CartComm(CommHandle handle, CommHandle neighbours, int[] dims, boolean[] periodic) {
        super(handle);
        this.dims = dims.clone();
        this.periodic = periodic.clone();
        this.neighbours = Comm.of(neighbours);
    }

    /** What {@link Comm#cart} refuses before communicating. */
    static void checkGrid(int[] dims, boolean[] periodic, int size, SourceLocation where) {
        if (dims.length != periodic.length) {
            throw new WeftException(where, "cart: " + dims.length + " dimensions " + Arrays.toString(dims) + " but "
                    + periodic.length + " periodic flags " + Arrays.toString(periodic));
        }
        long product = 1;
        for (int d : dims) {
            if (d < 1) {
                throw new WeftException(where, "cart: dimensions " + Arrays.toString(dims) + " must be positive"
                        + " (use Comm.dimsCreate(" + size + ", " + dims.length + ") to choose them)");
            }
            product *= d;
        }
        if (product != size) {
            throw new WeftException(where, "cart: dimensions " + Arrays.toString(dims) + " hold " + product
                    + " ranks but the communicator has " + size + " (use Comm.dimsCreate(" + size + ", "
                    + dims.length + ") to choose them)");
        }
    }

    /** The grid's extent in each dimension. */
    public int[] dims() {
        return dims.clone();
    }

    /** Whether each dimension wraps around. */
    public boolean[] periodic() {
        return periodic.clone();
    }

    /** This rank's coordinates on the grid (MPI_Cart_coords). */
    public int[] coords() {
        return coords(rank());
    }

    /**
     * The coordinates of {@code rank} on the grid.
     *
     * @throws WeftException naming the line for a rank outside the communicator
     */
    public int[] coords(int rank) {
        if (rank < 0 || rank >= size()) {
            throw new WeftException(SourceLocation.capture(), "coords: rank " + rank + " is outside [0, " + size()
                    + ") of communicator " + handle().name());
        }
        int[] c = new int[dims.length];
        for (int d = dims.length - 1; d >= 0; d--) {
            c[d] = rank % dims[d];
            rank /= dims[d];
        }
        return c;
    }

    /**
     * The rank at {@code coords} (MPI_Cart_rank): a coordinate out of range wraps in a periodic dimension.
     *
     * @throws WeftException naming the line for the wrong number of coordinates, or one out of range in a
     *     non-periodic dimension
     */
    public int rankOf(int... coords) {
        Args.notNull(coords, CartComm.class, "rankOf", "coords");
        if (coords.length != dims.length) {
            throw new WeftException(SourceLocation.capture(), "rankOf: " + coords.length + " coordinates "
                    + Arrays.toString(coords) + " on a grid of " + dims.length + " dimensions " + Arrays.toString(dims));
        }
        int rank = wrapped(coords);
        if (rank < 0) {
            throw new WeftException(SourceLocation.capture(), "rankOf: coordinates " + Arrays.toString(coords)
                    + " are off the grid " + Arrays.toString(dims) + " in a non-periodic dimension");
        }
        return rank;
    }

    /** The rank at {@code coords}, wrapped in periodic dimensions; −1 when off the grid in another. */
    private int wrapped(int[] coords) {
        int rank = 0;
        for (int d = 0; d < dims.length; d++) {
            int c = coords[d];
            if (periodic[d]) {
                c = Math.floorMod(c, dims[d]);
            } else if (c < 0 || c >= dims[d]) {
                return -1;
            }
            rank = rank * dims[d] + c;
        }
        return rank;
    }

    /**
     * The ranks {@code disp} steps away along {@code dim} (MPI_Cart_shift): {@code dest} at {@code +disp},
     * {@code source} at {@code -disp}, either {@link #PROC_NULL} off a closed edge. Shifting data by {@code disp}
     * is {@code sendrecv(x, s.dest(), s.source(), tag)}.
     *
     * @throws WeftException naming the line for a dimension outside the grid
     */
    public Shift shift(int dim, int disp) {
        if (dim < 0 || dim >= dims.length) {
            throw new WeftException(SourceLocation.capture(), "shift: dimension " + dim + " is outside the grid's "
                    + dims.length + " dimensions " + Arrays.toString(dims));
        }
        return new Shift(neighbour(dim, -disp), neighbour(dim, disp));
    }

    private int neighbour(int dim, int disp) {
        int[] c = coords();
        c[dim] += disp;
        int r = wrapped(c);
        return r < 0 ? PROC_NULL : r;
    }

    /** The neighbours {@link CartComm#shift} names: a rank or {@link Comm#PROC_NULL} each. */
    public record Shift(int source, int dest) {
    }

    /**
     * MPI_Neighbor_allgather: every neighbour's {@code x}, stacked along a new axis 0 in MPI's neighbour order
     * ({@code 2·ndims} blocks: dimension 0's −1 and +1 neighbours, then dimension 1's, ...); zeros for a
     * {@link #PROC_NULL} neighbour. Every rank passes one dtype and shape.
     */
    public Tensor neighborAllgather(Tensor x) {
        Args.notNull(x, CartComm.class, "neighborAllgather", "x");
        List<Tensor> blocks = new ArrayList<>(2 * dims.length);
        for (int d = 0; d < dims.length; d++) {
            Shift s = shift(d, 1);
            // from the −1 neighbour, which sends to its +1 one; then from the +1 neighbour
            blocks.add(exchange(x, s.dest(), s.source(), 2 * d));
            blocks.add(exchange(x, s.source(), s.dest(), 2 * d + 1));
        }
        return stack(blocks, x);
    }

    /**
     * MPI_Neighbor_alltoall: block {@code k} of {@code x}'s axis 0 ({@code 2·ndims} blocks) goes to neighbour
     * {@code k}, and block {@code k} of the result comes from neighbour {@code k} (zeros from {@link #PROC_NULL}), in
     * MPI's neighbour order: so a halo exchange sends its low edge as block {@code 2d} and its high edge as block
     * {@code 2d + 1}, and receives the low neighbour's high edge as block {@code 2d}.
     *
     * @throws ShapeException naming the line when axis 0 is not {@code 2·ndims} long
     */
    public Tensor neighborAlltoall(Tensor x) {
        Args.notNull(x, CartComm.class, "neighborAlltoall", "x");
        long[] shape = x.shape();
        if (shape.length == 0 || shape[0] != 2L * dims.length) {
            throw new ShapeException(SourceLocation.capture(), "neighborAlltoall: " + TensorAccess.aval(x)
                    + " needs axis 0 of " + 2 * dims.length + " blocks, one per neighbour of a " + dims.length
                    + "-dimensional grid");
        }
        List<Tensor> blocks = new ArrayList<>(2 * dims.length);
        for (int d = 0; d < dims.length; d++) {
            Shift s = shift(d, 1);
            Tensor low = x.slice(0, 2L * d, 2L * d + 1).reshape(tail(shape));
            Tensor high = x.slice(0, 2L * d + 1, 2L * d + 2).reshape(tail(shape));
            // the −1 neighbour's block for its +1 neighbour (its high edge), then the +1 neighbour's low edge
            blocks.add(exchange(high, s.dest(), s.source(), 2 * d));
            blocks.add(exchange(low, s.source(), s.dest(), 2 * d + 1));
        }
        return dims.length == 0 ? x : stack(blocks, x);
    }

    /** Sends {@code x} to {@code dest} and receives its like from {@code src} on the private duplicate. */
    private Tensor exchange(Tensor x, int dest, int src, int tag) {
        if (dest == rank() && src == rank()) {
            return x; // a periodic dimension of extent 1: this rank is both neighbours
        }
        return neighbours.sendrecv(x, dest, src, tag);
    }

    private static long[] tail(long[] shape) {
        return Arrays.copyOfRange(shape, 1, shape.length);
    }

    /** The blocks stacked along a new axis 0; a 0-dimensional grid has no neighbours: {@code [0, ...like]}. */
    private static Tensor stack(List<Tensor> blocks, Tensor like) {
        if (blocks.isEmpty()) {
            long[] s = like.shape();
            long[] none = new long[s.length + 1];
            System.arraycopy(s, 0, none, 1, s.length);
            return Tensor.zeros(like.dtype(), none);
        }
        Tensor[] rows = new Tensor[blocks.size()];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = blocks.get(i).reshape(prepend(blocks.get(i).shape()));
        }
        return Tensor.concat(0, rows);
    }

    @Override
    public String toString() {
        return "CartComm(" + handle().name() + ", rank " + rank() + " at " + Arrays.toString(coords()) + " of "
                + Arrays.toString(dims) + ")";
    }
}
