package dev.weft.backends.gpu.nccl;

import dev.weft.lowering.Targets;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.backends.comm.check.CommStep;
import dev.weft.backends.comm.exec.ReduceOps;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBindings;
import dev.weft.spi.Primitive;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handlers for the communication custom calls of a module lowered for the {@code gpu} target
 * ({@code weft.nccl.<op>}, the prefix the target names). Building them creates, collectively and in the module's
 * order, the NCCL communicator of every communicator the module names, over the communicator its reference is
 * bound to; each op's descriptor (its {@code backend_config}, an {@link Attr.CommConfig}) becomes an
 * {@link NcclCall} once, on its first call. Token operands are skipped and token results returned as
 * {@link NcclCallHandler#TOKEN}.
 *
 * <p>An {@code isend}'s buffer must stay unchanged until its {@code wait}, which takes it as an operand for that
 * reason; an {@code irecv}'s received tensor is a buffer from {@link DeviceMemory#allocate} that its {@code wait}
 * returns. NCCL has no tags: messages between two ranks match in posting order. Point-to-point calls leave
 * their NCCL group open ({@link NcclCommunicator}'s grouping rule): the caller ends it with
 * {@link NcclCommunicator#flush} before it queues work that reads what they received, and at the end.
 */
public final class NcclCustomCalls {
    private NcclCustomCalls() {
    }

    /**
     * A handler per communication call target name, running the calls of {@code module} in {@code ctx} over the
     * communicators {@code comms} binds.
     */
    public static Map<String, NcclCallHandler> handlers(Module module, CommBindings comms, NcclContext ctx) {
        String prefix = Targets.named(module.target()).commCallPrefix();
        commCalls(module).forEach(op -> ctx.handle(bootstrap(comms, op), op.location()));
        Map<Op, NcclCall> calls = new ConcurrentHashMap<>();
        Map<Op, Runnable> checks = new ConcurrentHashMap<>();
        Map<String, NcclCallHandler> handlers = new LinkedHashMap<>();
        for (Primitive<? extends CommOp> prim : CommPrims.ALL) {
            handlers.put(prefix + prim.name(), (op, operands, results, stream) -> {
                NcclCall call = calls.computeIfAbsent(op, o -> call(module, comms, ctx, o));
                checks.computeIfAbsent(op, o -> check(comms, o)).run();
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

    /** The communication calls ({@code <prefix>*}) of {@code module}, nested ones included, in program order. */
    public static List<Op> commCalls(Module module) {
        String prefix = Targets.named(module.target()).commCallPrefix();
        return IrWalk.ops(module)
                .filter(op -> op.attr("call_target_name") instanceof Attr.Str(String target) && target.startsWith(prefix))
                .toList();
    }

    /**
     * The schedule check of collective {@code op} ({@link CommCheck}, on the host, with the ranks of the communicator
     * that bootstraps its NCCL one): it queues nothing on the stream and waits for no kernel. Messages on NCCL carry
     * no envelope (NCCL has no tags to pair one with).
     */
    private static Runnable check(CommBindings comms, Op op) {
        Communicator comm = bootstrap(comms, op);
        if (!(config(op).op() instanceof CommOp.Collective c) || !CommCheck.applies(comm, c)) {
            return () -> {
            };
        }
        CommCheck check = CommCheck.of(comm);
        CommStep step = CommStep.of(c, config(op).data(), op.location());
        return () -> check.collective(step);
    }

    /** The communicator {@code op} runs on, whose ranks bootstrap its NCCL communicator. */
    private static Communicator bootstrap(CommBindings comms, Op op) {
        return Communicator.bound(comms, config(op).op().comm().ref(), op.location());
    }

    private static Attr.CommConfig config(Op op) {
        return (Attr.CommConfig) op.attr("backend_config");
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

    /** The call {@code op}'s descriptor says; a custom reduce op runs the module's function it calls. */
    private static NcclCall call(Module module, CommBindings comms, NcclContext ctx, Op op) {
        Attr.CommConfig config = config(op);
        NcclHandle comm = ctx.handle(bootstrap(comms, op), op.location());
        Aval data = config.data();
        RuntimeReduceOp.Builtin builtin = null;
        Func custom = null;
        if (config.op() instanceof CommOp.Reducing r) {
            if (r.op().isCustom()) {
                custom = module.function(((Attr.Symbol) ((Attr.Array) op.attr("called_computations")).elements()
                        .getFirst()).name());
            } else {
                builtin = ReduceOps.builtin(r.op());
            }
        }
        return new NcclCall(config.op(), comm, data == null ? null : data.dtype(),
                data == null ? 0 : data.shape().size(), data == null ? 0 : CommOp.rowElements(data), builtin, custom,
                op.location());
    }
}
