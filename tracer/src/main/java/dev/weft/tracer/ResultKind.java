package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.Trees;
import java.util.ArrayList;
import java.util.List;

/**
 * The return types a {@code @Compile} method may declare, and how each is flattened to and rebuilt from a list: a
 * tensor, nothing, or a tree of tensors ({@link Trees}: a list, map, array or record), whose structure is the traced
 * result's.
 */
enum ResultKind {
    TENSOR,
    TREE,
    VOID;

    static final String SUPPORTED = "a Tensor, a tree of tensors (a List, Map, array or record of them), or void";

    /** The kind for a declared return type, or {@code null} if it is not supported. */
    static ResultKind of(Class<?> type) {
        if (type == Tensor.class) {
            return TENSOR;
        }
        if (type == void.class) {
            return VOID;
        }
        return type.isPrimitive() || type == String.class || type.isEnum() ? null : TREE;
    }

    /**
     * The tensors of a traced result and its structure ({@code null} but for a tree), or {@code null} if
     * {@code result} is not of this kind.
     */
    Flat flatten(Object result) {
        return switch (this) {
            case TENSOR -> result instanceof Tensor t ? new Flat(List.of(t), null) : null;
            case TREE -> {
                if (!Trees.isTree(result)) {
                    yield null;
                }
                List<Tensor> leaves = new ArrayList<>();
                Trees.Structure s = Trees.structure(result, leaves, "the result");
                yield new Flat(leaves, s);
            }
            case VOID -> new Flat(List.of(), null);
        };
    }

    /** A traced result's tensors and, for a tree, its structure. */
    record Flat(List<Tensor> tensors, Trees.Structure structure) {
    }
}
