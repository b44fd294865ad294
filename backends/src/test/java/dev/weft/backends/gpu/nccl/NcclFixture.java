package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.lowering.CommLoweringRules;
import dev.weft.backends.gpu.GpuTarget;
import dev.weft.backends.gpu.NativeStub;
import dev.weft.comm.ReduceOp;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBindings;
import dev.weft.spi.Effect;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One rank's view of a module of {@code weft.nccl.*} calls built by hand (the shape {@link CommLoweringRules}
 * emits), its handlers over the NCCL stub, and the logs of what they did. Tests write each call once for every
 * rank, its descriptor's fields as a dictionary ({@link #op}); the fixture makes the rank's call, whose
 * {@code backend_config} is the descriptor on that rank's world.
 */
final class NcclFixture {
    static final TokenType TOKEN = TokenType.INSTANCE;
    private static final String PREFIX = new GpuTarget().commCallPrefix();

    final NativeStub stub = stub();
    final DeviceLog device = new DeviceLog();
    final Map<String, NcclCallHandler> handlers;
    private final Map<Op, Op> onRank = new IdentityHashMap<>();

    /** Builds the handlers for {@code ops} on {@code world}'s rank, then clears the stub's log of the set-up calls. */
    NcclFixture(Communicator world, List<Op> ops, Func... reductions) {
        ops.forEach(op -> onRank.put(op, onRank(world, op)));
        List<Func> functions = new ArrayList<>();
        functions.add(new Func("main", new Block(List.of(), ops.stream().map(onRank::get).toList())));
        functions.addAll(List.of(reductions));
        Module module = new Module(GpuTarget.NAME, functions);
        stub.reset();
        handlers = NcclCustomCalls.handlers(module, CommBindings.of(List.of(world)), new NcclContext(
                new NcclCommunicators(NcclLibrary.load(), device), device, device));
        stub.reset();
    }

    static NativeStub stub() {
        NativeStub s = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        System.setProperty(NcclLibrary.LIBRARY_PROPERTY, s.file.toString());
        return s;
    }

    /** Runs this rank's {@code op} through its handler. */
    List<Long> call(Op op, long[] operands, long[] results, long stream) {
        String target = ((Attr.Str) op.attr("call_target_name")).value();
        return handlers.get(target).call(onRank.get(op), operands, results, stream);
    }

    /** {@code op} on {@code world}: its dictionary made the descriptor it stands for. */
    private static Op onRank(Communicator world, Op op) {
        String name = ((Attr.Str) op.attr("call_target_name")).value().substring(PREFIX.length());
        Map<String, Attr> c = ((Attr.Dict) op.attr("backend_config")).entries();
        Aval data = c.get("dtype") instanceof Attr.Str(String dt)
                ? new Aval(DType.fromSpecName(dt), Shape.of(number(c, "count"))) : null;
        Map<String, Attr> attrs = new LinkedHashMap<>(op.attributes());
        attrs.put("backend_config", new Attr.CommConfig(descriptor(world, name, c, data, op), data));
        return new Op(op.name(), op.operands(), op.results().stream().map(Value::type).toList(), attrs, op.regions(),
                op.location(), new Effect.Ordered(world.ref()));
    }

    private static CommOp descriptor(Communicator world, String name, Map<String, Attr> c, Aval data, Op op) {
        int peer = (int) number(c, "peer");
        int tag = (int) number(c, "tag");
        int root = (int) number(c, "root");
        ReduceOp reduce = c.get("reduce_op") instanceof Attr.Str(String r) ? reduceOp(r, op) : null;
        return switch (CommOp.Kind.of(name)) {
            case COMM_RANK -> new CommOp.Rank(world);
            case BARRIER -> new CommOp.Barrier(world);
            case SEND -> new CommOp.Send(world, peer, tag);
            case RECV -> new CommOp.Recv(world, peer, tag, data);
            case ISEND -> new CommOp.Isend(world, peer, tag);
            case IRECV -> new CommOp.Irecv(world, peer, tag, data);
            case WAIT -> new CommOp.Wait(op.results().stream().anyMatch(v -> v.type() instanceof TensorType)
                    ? new CommOp.Irecv(world, 0, 0, data) : new CommOp.Isend(world, 0, 0));
            case ALLREDUCE -> new CommOp.AllReduce(world, reduce);
            case ALLGATHER -> new CommOp.AllGather(world);
            case REDUCE_SCATTER -> new CommOp.ReduceScatter(world, reduce);
            case BCAST -> new CommOp.Bcast(world, root);
            case REDUCE -> new CommOp.Reduce(world, reduce, root);
            case ALLTOALL -> new CommOp.AllToAll(world);
            case ALLGATHERV -> new CommOp.AllGatherV(world, counts(c, "counts"));
            case GATHERV -> new CommOp.GatherV(world, counts(c, "counts"), root);
            case SCATTERV -> new CommOp.ScatterV(world, counts(c, "counts"), root);
            case ALLTOALLV -> new CommOp.AllToAllV(world, counts(c, "send_counts"), counts(c, "recv_counts"));
            case SENDRECV -> new CommOp.SendRecv(world, peer, tag, (int) number(c, "source"),
                    (int) number(c, "recv_tag"), ((TensorType) op.results().getFirst().type()).aval());
            default -> throw new IllegalArgumentException(name + " is not a traced operation");
        };
    }

    /** A built-in by name, or a custom op when {@code op} calls a reduction function. */
    private static ReduceOp reduceOp(String name, Op op) {
        if (op.attr("called_computations") != null) {
            return ReduceOp.custom(name, (a, b) -> a);
        }
        return List.of(ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MIN, ReduceOp.MAX).stream()
                .filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    private static List<Long> counts(Map<String, Attr> c, String key) {
        return ((Attr.I64Array) c.get(key)).values();
    }

    private static long number(Map<String, Attr> c, String key) {
        return c.get(key) instanceof Attr.Int(long v, String type) ? v : -1;
    }

    /** The NCCL calls this thread made since the last {@link #clear}, {@code ncclCommGetAsyncError} included. */
    List<String> nccl() {
        return stub.calls();
    }

    void clear() {
        stub.reset();
        device.lines.clear();
    }

    /** A {@code weft.nccl.<name>} custom call at {@code Prog.java:<line>}. */
    static Op op(String name, int line, Map<String, Attr> config, List<Type> operands, List<Type> results,
                 String reduction) {
        Map<String, Attr> attrs = new LinkedHashMap<>();
        attrs.put("call_target_name", new Attr.Str(PREFIX + name));
        attrs.put("has_side_effect", new Attr.Bool(!name.equals("comm_rank")));
        attrs.put("backend_config", new Attr.Dict(config));
        if (reduction != null) {
            attrs.put("called_computations", new Attr.Array(List.of(new Attr.Symbol(reduction))));
        }
        return new Op(StableHlo.CUSTOM_CALL, operands.stream().map(Value::new).toList(), results, attrs, List.of(),
                at(line));
    }

    static Op op(String name, int line, Map<String, Attr> config, List<Type> operands, List<Type> results) {
        return op(name, line, config, operands, results, null);
    }

    static SourceLocation at(int line) {
        return new SourceLocation("Prog", "main", "Prog.java", line);
    }

    /** A backend_config: keys and values alternating, strings as strings, numbers as i64, long[] as arrays. */
    static Map<String, Attr> config(Object... kv) {
        Map<String, Attr> c = new LinkedHashMap<>();
        c.put("comm", new Attr.Str("world"));
        for (int i = 0; i < kv.length; i += 2) {
            c.put((String) kv[i], kv[i + 1] instanceof String s ? new Attr.Str(s)
                    : kv[i + 1] instanceof long[] a ? Attr.I64Array.of(a)
                    : Attr.Int.i64(((Number) kv[i + 1]).longValue()));
        }
        return c;
    }

    static TensorType t(DType dtype, long... dims) {
        return TensorType.of(dtype, dims);
    }
}
