package dev.weft.lowering.passes;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.FusionPiece;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The {@code verify} pass: checks that every operand is defined before its use (in its block or an enclosing
 * one; the regions of {@code weft.fusion} and {@code weft.fused_reduce} see only their arguments), that each
 * block ends in the right terminator and has no other, that elementwise ops have operands and result of one
 * shape, and that region signatures match their ops ({@code while}, {@code if}, {@code reduce}, {@code weft.fusion}
 * and {@code weft.fused_reduce}, whose views and pieces must lie inside their operands; a fused reduction's result
 * must be its fused value reduced; a counted loop's counter must be a scalar integer). Failures name the op's
 * source location.
 */
public final class Verifier implements Pass {
    private static final TensorType PREDICATE = TensorType.of(DType.BOOL);

    @Override
    public String name() {
        return "verify";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Op last = f.body().ops().isEmpty() ? null : f.body().terminator();
            if (last == null || !last.name().equals(StableHlo.FUNC_RETURN)) {
                throw new WeftException(last == null ? null : last.location(),
                        "verify: function @" + f.name() + " does not end in " + StableHlo.FUNC_RETURN);
            }
            block(f.body(), StableHlo.FUNC_RETURN, newScope());
        }
    }

    /**
     * Checks {@code b}, whose uses may see {@code visible} (values defined before it); adds what {@code b} defines to
     * {@code visible} and takes it out again at the end, so a nested region shares its parent's set rather than a
     * copy (copying made verification quadratic in programs with many reductions).
     */
    private void block(Block b, String terminator, Set<Value> visible) {
        List<Value> defined = new ArrayList<>(b.arguments());
        visible.addAll(b.arguments());
        if (b.ops().isEmpty()) {
            throw new WeftException(null, "verify: empty block, expected " + terminator);
        }
        for (int i = 0; i < b.ops().size(); i++) {
            Op op = b.ops().get(i);
            boolean last = i == b.ops().size() - 1;
            if (last != op.name().equals(terminator) || !last && Effects.isTerminator(op)) {
                throw fail(op, last ? "block must end in " + terminator : "terminator before the end of its block");
            }
            for (Value v : op.operands()) {
                if (!visible.contains(v)) {
                    throw fail(op, "operand " + v.type().mlir() + " is not defined before its use");
                }
            }
            if (op.elementwise() != null) {
                elementwise(op);
            }
            regions(op);
            boolean isolated = op.name().equals(StableHlo.FUSION) || op.name().equals(StableHlo.FUSED_REDUCE);
            for (Block region : op.regions()) {
                block(region, StableHlo.RETURN, isolated ? newScope() : visible);
            }
            visible.addAll(op.results());
            defined.addAll(op.results());
        }
        defined.forEach(visible::remove);
    }

    /** A counted loop's counter is one of its operands, a rank-0 i32 or i64, stepping forward. */
    private static void counter(Op op, Attr.CountedLoop c) {
        if (c.counter() < 0 || c.counter() >= op.operands().size()
                || !(op.operand(c.counter()).type() instanceof TensorType t) || t.shape().rank() != 0
                || t.dtype() != DType.I32 && t.dtype() != DType.I64 || c.step() <= 0) {
            throw fail(op, "counted loop " + c.mlir() + " does not name a rank-0 integer counter stepping forward");
        }
    }

    private static void elementwise(Op op) {
        if (op.results().size() != 1 || op.operands().isEmpty()) {
            throw fail(op, "elementwise op needs operands and one result");
        }
        var shape = op.result().tensorType().shape();
        for (Value v : op.operands()) {
            if (!v.tensorType().shape().equals(shape)) {
                throw fail(op, "elementwise operand " + v.type().mlir() + " does not have the result's shape "
                        + op.result().type().mlir());
            }
        }
    }

    /** Region arguments and results against the op's operands and results. */
    private static void regions(Op op) {
        List<Type> operandTypes = op.operands().stream().map(Value::type).toList();
        List<Type> resultTypes = op.results().stream().map(Value::type).toList();
        switch (op.name()) {
            case StableHlo.WHILE -> {
                expectRegions(op, 2);
                signature(op, 0, operandTypes, List.of(PREDICATE));
                signature(op, 1, operandTypes, operandTypes);
                if (!resultTypes.equals(operandTypes)) {
                    throw fail(op, "while results " + resultTypes + " differ from its operands " + operandTypes);
                }
                Attr.CountedLoop.of(op).ifPresent(c -> counter(op, c));
            }
            case StableHlo.IF -> {
                expectRegions(op, 2);
                if (!op.operands().getFirst().type().equals(PREDICATE)) {
                    throw fail(op, "if predicate must be tensor<i1>");
                }
                signature(op, 0, List.of(), resultTypes);
                signature(op, 1, List.of(), resultTypes);
            }
            case StableHlo.REDUCE -> {
                expectRegions(op, 1);
                Type scalar = TensorType.of(op.operands().getFirst().tensorType().dtype());
                signature(op, 0, List.of(scalar, scalar), List.of(scalar));
            }
            case StableHlo.FUSION -> {
                expectRegions(op, 1);
                signature(op, 0, fusionArguments(op, op.operands().size()), resultTypes);
            }
            case StableHlo.FUSED_REDUCE -> fusedReduce(op);
            default -> { }
        }
    }

    /**
     * A fused reduction: one init after the fusion's operands, a fusion region returning one tensor of the init's
     * dtype, a reduce body on scalars of it, and a result of that tensor's shape without {@code dimensions}.
     */
    private static void fusedReduce(Op op) {
        expectRegions(op, 2);
        Block fusion = op.regions().getFirst();
        if (op.results().size() != 1 || op.operands().isEmpty() || fusion.ops().isEmpty()
                || fusion.results().size() != 1 || !(fusion.results().getFirst().type() instanceof TensorType fused)
                || !(op.attr("dimensions") instanceof Attr.I64Array dimensions)) {
            throw fail(op, "needs one init, a fusion region returning one tensor, dimensions and one result");
        }
        TensorType scalar = TensorType.of(fused.dtype());
        if (!op.operands().getLast().type().equals(scalar)) {
            throw fail(op, "init " + op.operands().getLast().type().mlir() + " is not a " + scalar.mlir());
        }
        long[] dims = fused.shape().dims();
        boolean[] reduced = new boolean[dims.length];
        for (long d : dimensions.toArray()) {
            if (d < 0 || d >= dims.length || reduced[(int) d]) {
                throw fail(op, "bad reduce dimension " + d + " of " + fused.mlir());
            }
            reduced[(int) d] = true;
        }
        long[] kept = IntStream.range(0, dims.length).filter(k -> !reduced[k])
                .mapToLong(k -> dims[k]).toArray();
        if (!op.result().type().equals(TensorType.of(fused.dtype(), kept))) {
            throw fail(op, "result " + op.result().type().mlir() + " is not " + fused.mlir() + " reduced");
        }
        signature(op, 0, fusionArguments(op, op.operands().size() - 1), List.of(fused));
        signature(op, 1, List.of(scalar, scalar), List.of(scalar));
    }

    /**
     * The region argument types a fusion must have: each operand's type, or for a view the window's type once the
     * window is checked to lie inside the operand, or for a piecewise argument its own type once its boxes are
     * checked ({@link #pieces}). Of {@code op}'s operands the first {@code operands} are the fusion's; those past
     * the arguments must be read by boxes.
     */
    private static List<Type> fusionArguments(Op op, int operands) {
        List<Value> arguments = op.regions().getFirst().arguments();
        for (String key : List.of(StableHlo.FUSION_SLICE_STARTS, StableHlo.FUSION_PIECES)) {
            if (op.attr(key) != null && !(op.attr(key) instanceof Attr.Array a
                    && a.elements().size() == arguments.size())) {
                throw fail(op, key + " needs one entry per region argument");
            }
        }
        if (arguments.size() > operands) {
            throw fail(op, "fusion has fewer operands than region arguments");
        }
        List<Type> out = new ArrayList<>();
        boolean[] read = new boolean[operands];
        for (int i = 0; i < arguments.size(); i++) {
            read[i] = true;
            long[] starts = StableHlo.fusionSliceStarts(op, i);
            List<FusionPiece> pieces = StableHlo.fusionPieces(op, i);
            TensorType source = op.operand(i).tensorType();
            if (starts.length == 0 && pieces.isEmpty()) {
                out.add(source);
                continue;
            }
            if (!(arguments.get(i).type() instanceof TensorType argument)) {
                throw fail(op, "fusion region must take tensors");
            }
            if (!pieces.isEmpty()) {
                if (starts.length > 0) {
                    throw fail(op, "fusion argument " + i + " is both a view and piecewise");
                }
                pieces(op, i, argument, pieces, read);
                out.add(argument);
                continue;
            }
            long[] from = source.shape().dims(), size = argument.shape().dims();
            boolean inside = argument.dtype() == source.dtype() && size.length == from.length
                    && starts.length == from.length;
            for (int k = 0; inside && k < starts.length; k++) {
                inside = starts[k] >= 0 && starts[k] + size[k] <= from[k];
            }
            if (!inside) {
                throw fail(op, "fusion view " + argument.mlir() + " at " + Arrays.toString(starts)
                        + " does not lie inside operand " + source.mlir());
            }
            out.add(argument);
        }
        for (int j = arguments.size(); j < read.length; j++) {
            if (!read[j]) {
                throw fail(op, "fusion operand " + j + " is neither a region argument nor read by a piece");
            }
        }
        return out;
    }

    /**
     * Checks the boxes of piecewise argument {@code i} of type {@code argument}: each lies inside the argument and
     * reads a window inside an operand of the argument's dtype and rank, or a rank-0 one; the first reads operand
     * {@code i}; together they cover the argument exactly once. Marks the operands read in {@code read}.
     */
    private static void pieces(Op op, int i, TensorType argument, List<FusionPiece> pieces, boolean[] read) {
        long[] dims = argument.shape().dims();
        long covered = 0;
        for (int p = 0; p < pieces.size(); p++) {
            FusionPiece piece = pieces.get(p);
            if (piece == null || piece.operand() < 0 || piece.operand() >= read.length
                    || p == 0 && piece.operand() != i) {
                throw fail(op, "fusion argument " + i + ": piece " + p + " must be a box of "
                        + (p == 0 ? "operand " + i : "an operand"));
            }
            TensorType source = op.operand(piece.operand()).tensorType();
            boolean fits = source.dtype() == argument.dtype() && piece.at().length == dims.length
                    && piece.size().length == dims.length
                    && (source.shape().rank() == 0 ? piece.isFill() : piece.from().length == dims.length);
            for (int k = 0; fits && k < dims.length; k++) {
                fits = piece.size()[k] > 0 && piece.at()[k] >= 0 && piece.at()[k] + piece.size()[k] <= dims[k]
                        && (piece.isFill() || piece.from()[k] >= 0
                                && piece.from()[k] + piece.size()[k] <= source.shape().dim(k));
            }
            if (!fits) {
                throw fail(op, "fusion argument " + i + " " + argument.mlir() + ": " + piece
                        + " does not fit it and operand " + source.mlir());
            }
            for (int q = 0; q < p; q++) {
                if (overlap(piece, pieces.get(q))) {
                    throw fail(op, "fusion argument " + i + ": " + piece + " overlaps " + pieces.get(q));
                }
            }
            read[piece.operand()] = true;
            long volume = 1;
            for (long s : piece.size()) {
                volume *= s;
            }
            covered += volume;
        }
        if (covered != argument.shape().size()) {
            throw fail(op, "fusion argument " + i + " " + argument.mlir() + ": its pieces cover " + covered
                    + " of its " + argument.shape().size() + " elements");
        }
    }

    private static boolean overlap(FusionPiece a, FusionPiece b) {
        for (int k = 0; k < a.at().length; k++) {
            if (a.at()[k] >= b.at()[k] + b.size()[k] || b.at()[k] >= a.at()[k] + a.size()[k]) {
                return false;
            }
        }
        return true;
    }

    private static void expectRegions(Op op, int n) {
        if (op.regions().size() != n) {
            throw fail(op, "expected " + n + " regions, found " + op.regions().size());
        }
    }

    private static void signature(Op op, int region, List<Type> args, List<Type> results) {
        Block b = op.regions().get(region);
        List<Type> actualArgs = b.arguments().stream().map(Value::type).toList();
        List<Type> actualResults = b.ops().isEmpty() ? List.of() : b.results().stream().map(Value::type).toList();
        if (!actualArgs.equals(args) || !actualResults.equals(results)) {
            throw fail(op, "region " + region + " has signature " + actualArgs + " -> " + actualResults
                    + ", expected " + args + " -> " + results);
        }
    }

    private static Set<Value> newScope() {
        return Collections.newSetFromMap(new IdentityHashMap<>());
    }

    private static WeftException fail(Op op, String message) {
        return new WeftException(op.location(), "verify: " + op.name() + ": " + message);
    }
}
