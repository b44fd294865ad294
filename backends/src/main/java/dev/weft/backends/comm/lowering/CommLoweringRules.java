package dev.weft.backends.comm.lowering;

import dev.weft.WeftException;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Var;
import dev.weft.lowering.Lowerer;
import dev.weft.lowering.LoweringContext;
import dev.weft.lowering.LoweringRuleProvider;
import dev.weft.lowering.LoweringRules;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.Effect;
import dev.weft.spi.Errors;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.tracer.Tracer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lowers every communication primitive, on every target, to {@code stablehlo.custom_call @<prefix><op>}, the
 * prefix the target's ({@link dev.weft.lowering.Target#commCallPrefix}: {@code weft.mpi.} on {@code cpu},
 * {@code weft.nccl.} on {@code gpu}) and {@code <op>} its {@link CommOp#kind}, carrying its descriptor as the
 * {@code backend_config} ({@link Attr.CommConfig}: runtimes read the descriptor, its communicator named by
 * reference; the text names the communicator, peer, tag, reduce op, root, dtype and element count) and
 * {@code has_side_effect = true} for all but {@code comm_rank}, the op's effect being the application's. A custom
 * reduce op is traced on two 1-D tensors of the reduced element count and lowered into a private function listed
 * in {@code called_computations}. Tokens are threaded afterwards by the {@code thread-tokens} pass. NCCL has no
 * wildcard receive: {@code recv_any} is an error naming the line on the {@code gpu} target.
 */
public final class CommLoweringRules implements LoweringRuleProvider {
    @Override
    public void register(LoweringRules rules) {
        for (Primitive<? extends CommOp> prim : CommPrims.ALL) {
            rules.register(prim, LoweringRules.ANY_TARGET, CommLoweringRules::customCall);
        }
        rules.register(CommPrims.RECV_ANY, GpuTarget.NAME, (ctx, node, operands) -> {
            throw new WeftException(ctx.location(), "recvAny cannot be compiled for the gpu target: NCCL has no"
                    + " receive from any source or with any tag, nor a status to say what matched; compile it for"
                    + " the cpu target (MPI or fake ranks)");
        });
    }

    private static List<Value> customCall(LoweringContext ctx, Node node, List<Value> operands) {
        CommOp p = (CommOp) node.params();
        Aval data = p.data(node.inputs().stream().map(Var::aval).toList());
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str(ctx.target().commCallPrefix() + p.kind().label()));
        attrs.put("has_side_effect", new Attr.Bool(p.effect() instanceof Effect.Ordered));
        attrs.put("api_version", Attr.Int.i32(4));
        attrs.put("backend_config", new Attr.CommConfig(p, data));
        if (p instanceof CommOp.Reducing r && r.op().isCustom()) {
            attrs.put("called_computations", new Attr.Array(List.of(
                    new Attr.Symbol(reduction(ctx, r.op(), data)))));
        }
        List<Type> types = LoweringContext.outputTypes(node);
        return ctx.emit(StableHlo.CUSTOM_CALL, operands, types, attrs, List.of()).results();
    }

    /** Lowers {@code op}'s function on 1-D tensors of {@code data}'s size into a private function; its name. */
    private static String reduction(LoweringContext ctx, ReduceOp op, Aval data) {
        Aval flat = new Aval(data.dtype(), Shape.of(data.shape().size()));
        String name = "weft_reduce_" + op.name() + "_" + flat.dtype().specName() + "_" + flat.shape().size();
        Graph g = Tracer.trace(name, List.of(flat, flat),
                ts -> List.of(op.apply(ts.get(0), ts.get(1))));
        Aval got = g.body().results().getFirst().aval();
        if (!got.equals(flat)) {
            throw Errors.customReduceResult(ctx.location(), op.name(), flat, got.toString());
        }
        return ctx.addFunction(new Lowerer(ctx.rules()).lower(g, ctx.target(), name).main());
    }
}
