package dev.weft.graph;

import dev.weft.spi.CommHandle;
import java.util.List;

/**
 * The recorded program of one {@code @Compile} signature: its body region takes the tensor arguments in order
 * and returns the flattened tensor results. {@code commsRead} are the communicators whose rank or size the
 * program read while it was traced, in order of first read.
 */
public record Graph(String name, Region body, List<CommHandle> commsRead) {
    public Graph {
        commsRead = List.copyOf(commsRead);
    }

    /** A graph that read no communicator. */
    public Graph(String name, Region body) {
        this(name, body, List.of());
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("graph ").append(name).append('\n');
        body.print(b, "  ");
        return b.toString();
    }
}
