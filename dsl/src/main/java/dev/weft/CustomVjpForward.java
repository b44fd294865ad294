package dev.weft;

import java.util.List;

/**
 * What the forward pass of a {@link Weft#customVjp} function returns: its outputs, and the residuals its backward
 * pass reads (any tensors; reverse mode keeps them until the pullback runs).
 */
public record CustomVjpForward(List<Tensor> outputs, List<Tensor> residuals) {
    public CustomVjpForward {
        outputs = List.copyOf(outputs);
        residuals = List.copyOf(residuals);
    }
}
