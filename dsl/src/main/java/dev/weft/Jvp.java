package dev.weft;

import java.util.List;

/**
 * The result of {@link Weft#jvp}: the function's outputs and, for each, its tangent (directional derivative along
 * the given input tangents); zeros for an output that does not depend on the inputs.
 */
public record Jvp(List<Tensor> outputs, List<Tensor> tangents) {
    public Jvp {
        outputs = List.copyOf(outputs);
        tangents = List.copyOf(tangents);
    }
}
