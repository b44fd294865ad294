package dev.weft.prim;

import dev.weft.spi.Params;
import java.util.List;

/** Output axis {@code i} is input axis {@code permutation.get(i)}. */
public record TransposeParams(List<Integer> permutation) implements Params {
    public TransposeParams {
        permutation = List.copyOf(permutation);
    }

    public int[] toArray() {
        return permutation.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String toString() {
        return "perm=" + permutation;
    }
}
