package dev.weft.backends.comm.lowering;

import dev.weft.backends.comm.exec.CommCustomCalls;
import dev.weft.backends.cpu.CpuTarget;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.backends.gpu.nccl.NcclCustomCalls;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Graph;
import dev.weft.graph.Node;
import dev.weft.graph.Var;
import dev.weft.lowering.Lowerer;
import dev.weft.lowering.LoweringContext;
import dev.weft.lowering.LoweringRule;
import dev.weft.lowering.LoweringRuleProvider;
import dev.weft.lowering.LoweringRules;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Type;
import dev.weft.prim.CommParams;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.Errors;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.tracer.Tracer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Lowers every communication primitive to {@code stablehlo.custom_call @weft.mpi.<op>} (target {@code cpu}) or
 * {@code @weft.nccl.<op>} (target {@code gpu}), with {@code has_side_effect = true} for all but
 * {@code comm_rank}, and a {@code backend_config} dictionary naming the communicator, peer, tag, reduce op,
 * root, dtype and element count. The communicator handle itself is bound to the module as resource
 * {@code comm:<name>}. A custom reduce op is traced on two 1-D tensors of the reduced element count and lowered
 * into a private function listed in {@code called_computations}. Tokens are threaded afterwards by the
 * {@code thread-tokens} pass.
 */
public final class CommLoweringRules implements LoweringRuleProvider {
    /** The resource key of a communicator named {@code name}. */
    public static String resourceKey(String name) {
        return "comm:" + name;
    }

    /** Each target's namespace of communication custom calls: the runtime its executor dispatches them to. */
    private static final Map<String, String> CALL_PREFIX = Map.of(
            CpuTarget.NAME, CommCustomCalls.PREFIX,
            GpuTarget.NAME, NcclCustomCalls.PREFIX);

    @Override
    public void register(LoweringRules rules) {
        for (String target : CALL_PREFIX.keySet()) {
            String prefix = CALL_PREFIX.get(target);
            reg(rules, target, prefix, CommPrims.COMM_RANK, "comm_rank", false);
            reg(rules, target, prefix, CommPrims.BARRIER, "barrier", true);
            reg(rules, target, prefix, CommPrims.SEND, "send", true);
            reg(rules, target, prefix, CommPrims.RECV, "recv", true);
            reg(rules, target, prefix, CommPrims.ISEND, "isend", true);
            reg(rules, target, prefix, CommPrims.IRECV, "irecv", true);
            reg(rules, target, prefix, CommPrims.WAIT, "wait", true);
            reg(rules, target, prefix, CommPrims.ALLREDUCE, "allreduce", true);
            reg(rules, target, prefix, CommPrims.ALLGATHER, "allgather", true);
            reg(rules, target, prefix, CommPrims.REDUCE_SCATTER, "reduce_scatter", true);
            reg(rules, target, prefix, CommPrims.BCAST, "bcast", true);
            reg(rules, target, prefix, CommPrims.REDUCE, "reduce", true);
            reg(rules, target, prefix, CommPrims.ALLTOALL, "alltoall", true);
            reg(rules, target, prefix, CommPrims.SENDRECV, "sendrecv", true);
        }
    }

    private static void reg(LoweringRules rules, String target, String prefix, Primitive<CommParams> prim,
                            String op, boolean sideEffect) {
        rules.register(prim, target, customCall(prefix + op, sideEffect));
    }

    private static LoweringRule customCall(String targetName, boolean sideEffect) {
        return (ctx, node, operands) -> {
            CommParams p = (CommParams) node.params();
            ctx.bindResource(resourceKey(p.comm().name()), p.comm());
            Map<String, Attr> attrs = new LinkedHashMap<>();
            attrs.put("call_target_name", new Attr.Str(targetName));
            attrs.put("has_side_effect", new Attr.Bool(sideEffect));
            attrs.put("api_version", Attr.Int.i32(4));
            attrs.put("backend_config", new Attr.Dict(config(node, p)));
            if (p.op() != null && p.op().isCustom()) {
                Aval data = node.inputs().getFirst().aval();
                attrs.put("called_computations", new Attr.Array(List.of(
                        new Attr.Symbol(reduction(ctx, p.op(), data)))));
            }
            List<Type> types = LoweringContext.outputTypes(node);
            return ctx.emit(StableHlo.CUSTOM_CALL, operands, types, attrs, List.of()).results();
        };
    }

    /** The backend_config entries: only those that mean something for this op. */
    private static Map<String, Attr> config(Node node, CommParams p) {
        Map<String, Attr> c = new LinkedHashMap<>();
        c.put("comm", new Attr.Str(p.comm().name()));
        if (p.peer() >= 0) {
            c.put("peer", Attr.Int.i64(p.peer()));
            c.put("tag", Attr.Int.i64(p.tag()));
        }
        if (p.source() >= 0) {
            c.put("source", Attr.Int.i64(p.source()));
            c.put("recv_tag", Attr.Int.i64(p.recvTag()));
        }
        if (p.op() != null) {
            c.put("reduce_op", new Attr.Str(p.op().name()));
        }
        if (p.root() >= 0) {
            c.put("root", Attr.Int.i64(p.root()));
        }
        Aval data = CommPrims.data(node.prim(), p, node.inputs().stream().map(Var::aval).toList());
        if (data != null) {
            c.put("dtype", new Attr.Str(data.dtype().specName()));
            c.put("count", Attr.Int.i64(data.shape().size()));
        }
        return c;
    }

    /** Lowers {@code op}'s function on 1-D tensors of {@code data}'s size into a private function; its name. */
    private static String reduction(LoweringContext ctx, ReduceOp op, Aval data) {
        Aval flat = new Aval(data.dtype(), Shape.of(data.shape().size()));
        String name = "weft_reduce_" + op.name() + "_" + flat.dtype().specName() + "_" + flat.shape().size();
        Graph g = Tracer.trace(name, List.of(flat, flat),
                ts -> List.of(op.function().apply(ts.get(0), ts.get(1))));
        Aval got = g.body().results().getFirst().aval();
        if (!got.equals(flat)) {
            throw Errors.customReduceResult(ctx.location(), op.name(), flat, got.toString());
        }
        return ctx.addFunction(new Lowerer(ctx.rules()).lower(g, ctx.target(), name).main());
    }
}
