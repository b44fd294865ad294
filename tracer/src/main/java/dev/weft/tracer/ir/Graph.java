package dev.weft.tracer.ir;

/**
 * The recorded program of one {@code @Compile} signature: its body region takes the tensor arguments in order
 * and returns the flattened tensor results.
 */
public record Graph(String name, Region body) {
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("graph ").append(name).append('\n');
        body.print(b, "  ");
        return b.toString();
    }
}
