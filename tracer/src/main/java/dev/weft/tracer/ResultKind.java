package dev.weft.tracer;

import dev.weft.Tensor;
import java.util.Arrays;
import java.util.List;

/** The return types a {@code @Compile} method may declare, and how each is flattened to and rebuilt from a list. */
enum ResultKind {
    TENSOR,
    TENSOR_ARRAY,
    TENSOR_LIST,
    VOID;

    static final String SUPPORTED = "Tensor, Tensor[], List<Tensor> or void";

    /** The kind for a declared return type, or {@code null} if it is not supported. */
    static ResultKind of(Class<?> type) {
        if (type == Tensor.class) {
            return TENSOR;
        }
        if (type == Tensor[].class) {
            return TENSOR_ARRAY;
        }
        if (type == List.class) {
            return TENSOR_LIST;
        }
        return type == void.class ? VOID : null;
    }

    /** The tensors of a traced result, or {@code null} if {@code result} is not of this kind. */
    List<Tensor> flatten(Object result) {
        return switch (this) {
            case TENSOR -> result instanceof Tensor t ? List.of(t) : null;
            case TENSOR_ARRAY -> result instanceof Tensor[] a && allTensors(Arrays.asList(a)) ? List.of(a) : null;
            case TENSOR_LIST -> result instanceof List<?> l && allTensors(l)
                    ? l.stream().map(Tensor.class::cast).toList() : null;
            case VOID -> List.of();
        };
    }

    /** The value to return from the executable's outputs; {@code absent} for void. */
    Object rebuild(List<Tensor> outputs, Object absent) {
        return switch (this) {
            case TENSOR -> outputs.getFirst();
            case TENSOR_ARRAY -> outputs.toArray(new Tensor[0]);
            case TENSOR_LIST -> List.copyOf(outputs);
            case VOID -> absent;
        };
    }

    private static boolean allTensors(List<?> values) {
        for (Object v : values) {
            if (!(v instanceof Tensor)) {
                return false;
            }
        }
        return true;
    }
}
