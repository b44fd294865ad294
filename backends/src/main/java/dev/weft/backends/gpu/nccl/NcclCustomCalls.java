package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.ReduceOp;
import dev.weft.backends.comm.lowering.CommLoweringRules;

import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handlers for the {@code weft.nccl.<op>} custom calls of one module (see {@link CommLoweringRules} for their
 * {@code backend_config}). Building them creates, collectively and in the module's order, the NCCL communicator
 * of every communicator the module names; each op's {@code backend_config} is decoded once, on its first call,
 * into an {@link NcclCall}. Token operands are skipped and token results returned as
 * {@link NcclCallHandler#TOKEN}.
 *
 * <p>An {@code isend}'s buffer must stay unchanged until its {@code wait}, which takes it as an operand for that
 * reason; an {@code irecv}'s received tensor is a buffer from {@link DeviceMemory#allocate} that its {@code wait}
 * returns. NCCL has no tags: messages between two ranks match in posting order. Point-to-point calls leave
 * their NCCL group open ({@link NcclCommunicator}'s grouping rule): the caller ends it with
 * {@link NcclCommunicator#flush} before it queues work that reads what they received, and at the end.
 */
public final class NcclCustomCalls {
    public static final String PREFIX = "weft.nccl.";
    private static final List<String> OPS = List.of("comm_rank", "barrier", "send", "recv", "isend", "irecv", "wait",
            "allreduce", "allgather", "reduce_scatter", "bcast", "reduce", "alltoall", "sendrecv");

    private NcclCustomCalls() {
    }

    /** A handler per {@code weft.nccl.*} call target name, running the calls of {@code module} in {@code ctx}. */
    public static Map<String, NcclCallHandler> handlers(Module module, NcclContext ctx) {
        for (Func f : module.functions()) {
            createCommunicators(module, ctx, f.body());
        }
        Map<Op, NcclCall> decoded = new ConcurrentHashMap<>();
        Map<String, NcclCallHandler> handlers = new LinkedHashMap<>();
        for (String name : OPS) {
            handlers.put(PREFIX + name, (op, operands, results, stream) -> {
                NcclCall call = decoded.computeIfAbsent(op, o -> decode(module, ctx, name, o));
                List<Long> out = new ArrayList<>(call.run(ctx, tensors(op.operands(), operands),
                        tensors(op.results(), results), stream));
                for (var v : op.results()) {
                    if (v.type() instanceof TokenType) {
                        out.add(NcclCallHandler.TOKEN);
                    }
                }
                return out;
            });
        }
        return handlers;
    }

    /** Creates the NCCL communicator of each {@code weft.nccl.*} call in {@code block}, nested ones included. */
    private static void createCommunicators(Module module, NcclContext ctx, Block block) {
        for (Op op : block.ops()) {
            if (op.attr("call_target_name") instanceof Attr.Str(String target) && target.startsWith(PREFIX)) {
                ctx.communicator(bootstrap(module, op), op.location());
            }
            for (Block region : op.regions()) {
                createCommunicators(module, ctx, region);
            }
        }
    }

    private static Communicator bootstrap(Module module, Op op) {
        Map<String, Attr> c = ((Attr.Dict) op.attr("backend_config")).entries();
        return (Communicator) module.resource(CommLoweringRules.resourceKey(((Attr.Str) c.get("comm")).value()));
    }

    /** The entries of {@code ptrs} whose values are tensors, in order. */
    private static long[] tensors(List<Value> values, long[] ptrs) {
        long[] t = new long[ptrs.length];
        int n = 0;
        for (int i = 0; i < ptrs.length; i++) {
            if (!(values.get(i).type() instanceof TokenType)) {
                t[n++] = ptrs[i];
            }
        }
        return Arrays.copyOf(t, n);
    }

    private static NcclCall decode(Module module, NcclContext ctx, String opName, Op op) {
        Map<String, Attr> c = ((Attr.Dict) op.attr("backend_config")).entries();
        NcclCommunicator comm = ctx.communicator(bootstrap(module, op), op.location());
        DType dtype = c.get("dtype") instanceof Attr.Str(String dt) ? DType.fromSpecName(dt) : null;
        long count = c.get("count") instanceof Attr.Int(long v, String type) ? v : 0;
        ReduceOp.Builtin builtin = null;
        Func custom = null;
        if (c.get("reduce_op") instanceof Attr.Str(String name)) {
            if (op.attr("called_computations") instanceof Attr.Array(List<Attr> fs)) {
                custom = module.function(((Attr.Symbol) fs.getFirst()).name());
            } else {
                builtin = ReduceOp.Builtin.valueOf(name.toUpperCase(Locale.ROOT));
            }
        }
        long received = opName.equals("sendrecv")
                ? ((TensorType) op.results().getFirst().type()).shape().size() : 0;
        return new NcclCall(opName, comm, dtype, count, intOf(c, "peer"), intOf(c, "source"), received,
                intOf(c, "root"), builtin, custom, op.location());
    }

    private static int intOf(Map<String, Attr> c, String key) {
        return c.get(key) instanceof Attr.Int(long v, String type) ? (int) v : -1;
    }
}
