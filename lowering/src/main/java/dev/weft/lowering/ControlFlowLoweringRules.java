package dev.weft.lowering;

import static dev.weft.lowering.LoweringContext.outputTypes;
import static dev.weft.lowering.LoweringRules.ANY_TARGET;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Rules for the structured control flow of {@link Prims#FORI}, {@link Prims#WHILE} and {@link Prims#COND}.
 *
 * <p>A fori node has inputs {@code (carries..., captures...)}, outputs the final carries and one region taking
 * {@code (i: i32[], carries..., captures...)} and returning the new carries. It becomes {@code stablehlo.while}
 * over {@code (i, carries..., captures...)}: the condition is {@code i < hi}, the body runs the region and
 * yields {@code (i + 1, new carries..., captures...)}. The op carries its count as an {@link Attr.CountedLoop}
 * (counter 0, {@code [lo, hi)}, step 1), which executors read instead of the regions.
 *
 * <p>A cond node has inputs {@code (pred: bool[], captures...)} and two regions taking the captures and returning
 * the outputs. It becomes {@code stablehlo.if(pred)} whose argument-less regions use the outer values directly.
 */
public final class ControlFlowLoweringRules implements LoweringRuleProvider {
    private static final TensorType INDEX = TensorType.of(DType.I32);

    @Override
    public void register(LoweringRules rules) {
        rules.register(Prims.FORI, ANY_TARGET, ControlFlowLoweringRules::fori);
        rules.register(Prims.COND, ANY_TARGET, ControlFlowLoweringRules::cond);
        rules.register(Prims.WHILE, ANY_TARGET, ControlFlowLoweringRules::whileLoop);
    }

    /**
     * A while node (inputs {@code (carries..., captures...)}, a condition and a body region on them) becomes
     * {@code stablehlo.while} over the same values: the condition region as its condition, the body yielding
     * {@code (new carries..., captures...)}. It has no counter, so executors run it as a general while loop.
     */
    private static List<Value> whileLoop(LoweringContext ctx, Node node, List<Value> in) {
        WhileParams p = (WhileParams) node.params();
        int carries = node.outputs().size();
        checkResults(ctx, p.body(), outputTypes(node));
        List<Type> types = in.stream().map(Value::type).toList();
        Block cond = ctx.block(types, args -> ctx.lowerRegion(p.cond(), args));
        Block body = ctx.block(types, args -> {
            List<Value> next = new ArrayList<>(ctx.lowerRegion(p.body(), args));
            next.addAll(args.subList(carries, args.size()));
            return next;
        });
        return ctx.emit(StableHlo.WHILE, in, types, Map.of(), List.of(cond, body)).results().subList(0, carries);
    }

    private static List<Value> fori(LoweringContext ctx, Node node, List<Value> in) {
        LoopParams p = (LoopParams) node.params();
        int carries = node.outputs().size();
        Region region = node.regions().getFirst();
        checkResults(ctx, region, outputTypes(node));
        List<Value> operands = new ArrayList<>();
        operands.add(ctx.scalar(DType.I32, (long) p.lo()));
        operands.addAll(in);
        List<Type> types = operands.stream().map(Value::type).toList();
        Block cond = ctx.block(types, args -> List.of(ctx.emit(ElementwiseOp.LT,
                List.of(args.getFirst(), ctx.scalar(DType.I32, (long) p.hi())), List.of(TensorType.of(DType.BOOL)))
                .result()));
        Block body = ctx.block(types, args -> {
            List<Value> next = new ArrayList<>();
            List<Value> newCarries = ctx.lowerRegion(region, args);
            next.add(ctx.emit(ElementwiseOp.ADD, List.of(args.getFirst(), ctx.scalar(DType.I32, 1L)), List.of(INDEX))
                    .result());
            next.addAll(newCarries);
            next.addAll(args.subList(1 + carries, args.size()));
            return next;
        });
        Attr count = new Attr.CountedLoop(0, p.lo(), p.hi(), 1);
        List<Value> results = ctx.emit(StableHlo.WHILE, operands, types, Map.of(Attr.CountedLoop.KEY, count),
                List.of(cond, body)).results();
        return results.subList(1, 1 + carries);
    }

    private static List<Value> cond(LoweringContext ctx, Node node, List<Value> in) {
        List<Value> captures = in.subList(1, in.size());
        List<Block> branches = new ArrayList<>();
        for (Region region : node.regions()) {
            checkResults(ctx, region, outputTypes(node));
            branches.add(ctx.block(List.of(), args -> ctx.lowerRegion(region, captures)));
        }
        return ctx.emit(StableHlo.IF, List.of(in.getFirst()), outputTypes(node), Map.of(), branches).results();
    }

    private static void checkResults(LoweringContext ctx, Region region, List<Type> expected) {
        List<Type> actual = region.results().stream().map(v -> (Type) TensorType.of(v.aval())).toList();
        if (!actual.equals(expected)) {
            throw new WeftException(ctx.location(), "region results " + actual + " do not match " + expected);
        }
    }
}
