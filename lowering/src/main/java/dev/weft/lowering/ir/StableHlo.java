package dev.weft.lowering.ir;

import dev.weft.prim.ElementwiseOp;

/**
 * Names of the ops the lowered module uses, shared by lowering rules, passes and executors.
 *
 * <p>Attributes, by op: {@code constant} {value: Dense}; {@code compare} {comparison_direction: Enum(stablehlo,
 * comparison_direction, EQ|NE|LT|LE|GT|GE)}; {@code convert} none; {@code reduce} (operand, init scalar)
 * {dimensions: I64Array} with one region {@code ^bb0(acc, x)} of rank-0 tensors returning the combination;
 * {@code dot_general} {dot_dimension_numbers: DotDimensions}; {@code reshape} none; {@code transpose}
 * {permutation}; {@code broadcast_in_dim} {broadcast_dimensions}; {@code slice} {start_indices, limit_indices,
 * strides}; {@code concatenate} {dimension: Int}; {@code pad} (operand, padding value scalar)
 * {edge_padding_low, edge_padding_high, interior_padding}; {@code iota} {iota_dimension: Int};
 * {@code while} operands = carries, regions (cond, body) each taking the carries, cond returning a rank-0 i1;
 * {@code if} (pred) regions (true, false) without arguments that use outer values directly;
 * {@link #FUSION} inputs, one region taking tensors of the inputs' types and returning the fused results,
 * made only of elementwise ops ({@link Op#elementwise()}) of one shape (the fused shape; their dtypes may differ) and of
 * {@code broadcast_in_dim}s of rank-0 region arguments to that shape. Such an argument is a scalar read once, never a
 * full-size tensor. A fusion may carry {@link #FUSION_SLICE_STARTS}: then region argument {@code i} is a view, the
 * unit-stride window of operand {@code i} that starts at the listed indices and has the argument's shape (a slice
 * absorbed into the fusion, never materialised); an empty list means the argument is the operand itself. A fusion
 * may also carry {@link #FUSION_PIECES}: then a region argument with a non-empty entry is piecewise, assembled from
 * boxes ({@link FusionPiece}) that partition it, each a window of an operand or one rank-0 operand's value (the
 * absorbed form of {@code slice}s, {@code concatenate}s and edge-only {@code pad}s of the operands, never
 * materialised). A piecewise argument's operand is the one its first box reads; operands past the region's
 * arguments are read only by boxes. {@link #FUSED_REDUCE} is a {@code reduce} of a fusion's one result.
 */
public final class StableHlo {
    private StableHlo() {
    }

    public static final String CONSTANT = "stablehlo.constant";
    /** The attribute naming a comparison's direction; the elementwise ops' own names are {@link ElementwiseOp}'s. */
    public static final String COMPARISON_DIRECTION = "comparison_direction";
    public static final String REDUCE = "stablehlo.reduce";
    public static final String DOT_GENERAL = "stablehlo.dot_general";
    public static final String RESHAPE = "stablehlo.reshape";
    public static final String TRANSPOSE = "stablehlo.transpose";
    public static final String BROADCAST_IN_DIM = "stablehlo.broadcast_in_dim";
    public static final String SLICE = "stablehlo.slice";
    public static final String CONCATENATE = "stablehlo.concatenate";
    public static final String PAD = "stablehlo.pad";
    public static final String DYNAMIC_SLICE = "stablehlo.dynamic_slice";
    public static final String DYNAMIC_UPDATE_SLICE = "stablehlo.dynamic_update_slice";
    public static final String IOTA = "stablehlo.iota";
    public static final String WHILE = "stablehlo.while";
    public static final String IF = "stablehlo.if";
    public static final String RETURN = "stablehlo.return";
    public static final String CUSTOM_CALL = "stablehlo.custom_call";
    /** With no operands: a fresh {@code !stablehlo.token} starting a chain of effects. */
    public static final String AFTER_ALL = "stablehlo.after_all";
    public static final String FUNC_RETURN = "func.return";
    /** A group of fused elementwise ops (Weft's own op). */
    public static final String FUSION = "weft.fusion";

    /**
     * A reduction of a fused elementwise value that is never materialised (Weft's own op, CPU target): what
     * {@code reduce(fusion(x...), init)} computes. Operands: the fusion's operands (read as {@link #FUSION} reads
     * them, with its {@link #FUSION_SLICE_STARTS} and {@link #FUSION_PIECES}), then the init scalar. Region 0 is
     * the fusion's region, returning the one value reduced; region 1 is the {@code reduce} body. Attribute
     * {@code dimensions} as for {@code reduce}; the result is the reduced value.
     */
    public static final String FUSED_REDUCE = "weft.fused_reduce";

    /**
     * Optional {@link #FUSION} attribute: an {@code Attr.Array} with one {@code Attr.I64Array} per region argument,
     * the start indices of the window of its operand that it views, or empty when it takes the operand whole.
     */
    public static final String FUSION_SLICE_STARTS = "weft.slice_starts";

    /**
     * Optional {@link #FUSION} attribute: an {@code Attr.Array} with one entry per region argument, an
     * {@code Attr.Array} of the argument's boxes ({@link FusionPiece#attr()}), or empty when the argument is not
     * piecewise. The boxes of an argument are disjoint and cover it; its {@link #FUSION_SLICE_STARTS} entry is
     * empty.
     */
    public static final String FUSION_PIECES = "weft.pieces";

    /** Attribute set by buffer planning: indices of the operands whose last use is this op. */
    public static final String LAST_USE = "weft.last_use";

    /**
     * The start indices of the window that region argument {@code operand} of {@code fusion} views (see
     * {@link #FUSION_SLICE_STARTS}), or an empty array when the argument is the operand itself.
     */
    public static long[] fusionSliceStarts(Op fusion, int operand) {
        return fusion.attr(FUSION_SLICE_STARTS) instanceof Attr.Array a
                && a.elements().get(operand) instanceof Attr.I64Array starts ? starts.toArray() : new long[0];
    }

    /**
     * The boxes of piecewise region argument {@code argument} of {@code fusion} (see {@link #FUSION_PIECES}), or an
     * empty list when the argument is not piecewise. A box that does not parse is null (the verifier rejects it).
     */
    public static java.util.List<FusionPiece> fusionPieces(Op fusion, int argument) {
        if (!(fusion.attr(FUSION_PIECES) instanceof Attr.Array a) || argument >= a.elements().size()
                || !(a.elements().get(argument) instanceof Attr.Array boxes)) {
            return java.util.List.of();
        }
        return boxes.elements().stream().map(FusionPiece::of).toList();
    }
}
