package dev.weft.shard;

import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.spi.SourceLocation;
import java.util.Arrays;
import java.util.List;

/**
 * The ranks of a communicator arranged as an n-dimensional grid with a name per axis, row-major: rank {@code r} of
 * a {@code [2, 3]} mesh with axes {@code ("x", "y")} sits at {@code x = r / 3, y = r % 3}. A {@link Sharding} splits a
 * tensor dimension over one axis. Making a mesh of more than one axis is collective (it splits the communicator
 * once per axis, so every rank of it must make the same mesh, in the same order as its other communication);
 * meshes are compared by identity.
 */
public final class Mesh {
    private final Comm comm;
    private final int[] shape;
    private final List<String> axes;
    private final int[] coords;
    private final Comm[] axisComms;

    private Mesh(Comm comm, int[] shape, List<String> axes) {
        this.comm = comm;
        this.shape = shape.clone();
        this.axes = axes;
        int rank = comm.rank();
        coords = new int[shape.length];
        axisComms = new Comm[shape.length];
        int stride = 1;
        for (int k = shape.length - 1; k >= 0; k--) {
            coords[k] = rank / stride % shape[k];
            stride *= shape[k];
        }
        stride = 1;
        for (int k = shape.length - 1; k >= 0; k--) {
            axisComms[k] = shape[k] == comm.size() ? comm : comm.split(rank - coords[k] * stride, coords[k]);
            stride *= shape[k];
        }
    }

    /** A one-axis mesh of every rank of {@code comm}. */
    public static Mesh of(Comm comm, String axis) {
        return of(comm, new int[] {comm.size()}, axis);
    }

    /**
     * A mesh of {@code shape} (whose product must be {@code comm.size()}) with the axes named {@code axes}, ranks
     * row-major.
     *
     * @throws WeftException naming the line when the shape does not cover the communicator, or names are missing,
     *     repeated or null
     */
    public static Mesh of(Comm comm, int[] shape, String... axes) {
        SourceLocation where = SourceLocation.capture();
        long product = Arrays.stream(shape).asLongStream().reduce(1, (a, b) -> a * b);
        if (shape.length == 0 || Arrays.stream(shape).anyMatch(n -> n < 1) || product != comm.size()) {
            throw new WeftException(where, "Mesh.of: shape " + Arrays.toString(shape) + " does not arrange the "
                    + comm.size() + " ranks of " + comm + " (the product of positive sizes must be " + comm.size()
                    + ")");
        }
        if (axes.length != shape.length || Arrays.stream(axes).anyMatch(a -> a == null)
                || Arrays.stream(axes).distinct().count() != axes.length) {
            throw new WeftException(where, "Mesh.of: axes " + Arrays.toString(axes) + " must be " + shape.length
                    + " distinct names, one per entry of the shape " + Arrays.toString(shape));
        }
        return new Mesh(comm, shape, List.of(axes));
    }

    /** The communicator of every rank of the mesh. */
    public Comm comm() {
        return comm;
    }

    /** The axis names, in order. */
    public List<String> axes() {
        return axes;
    }

    /** The number of ranks along {@code axis}. */
    public int size(String axis) {
        return shape[index(axis)];
    }

    /** This rank's position along {@code axis}. */
    public int coordinate(String axis) {
        return coords[index(axis)];
    }

    /** The ranks that differ from this one only along {@code axis}, ranked by their position along it. */
    public Comm axisComm(String axis) {
        return axisComms[index(axis)];
    }

    /** Whether {@code axis} names an axis of this mesh. */
    public boolean hasAxis(String axis) {
        return axes.contains(axis);
    }

    private int index(String axis) {
        int i = axes.indexOf(axis);
        if (i < 0) {
            throw new IllegalArgumentException("no axis " + axis + " in " + this);
        }
        return i;
    }

    /** Like {@code Mesh[x=2, y=3]}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Mesh[");
        for (int k = 0; k < shape.length; k++) {
            b.append(k == 0 ? "" : ", ").append(axes.get(k)).append('=').append(shape[k]);
        }
        return b.append(']').toString();
    }
}
