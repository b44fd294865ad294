package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.lowering.CommLoweringRules;

import dev.weft.backends.gpu.GpuTarget;
import dev.weft.backends.gpu.NativeStub;
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
import dev.weft.spi.SourceLocation;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One rank's view of a module of {@code weft.nccl.*} calls built by hand (the shape {@link CommLoweringRules}
 * emits), its handlers over the NCCL stub, and the logs of what they did.
 */
final class NcclFixture {
    static final TokenType TOKEN = TokenType.INSTANCE;

    final NativeStub stub = stub();
    final DeviceLog device = new DeviceLog();
    final Map<String, NcclCallHandler> handlers;

    /** Builds the handlers for {@code ops} on {@code world}'s rank, then clears the stub's log of the set-up calls. */
    NcclFixture(Communicator world, List<Op> ops, Func... reductions) {
        List<Func> functions = new ArrayList<>();
        functions.add(new Func("main", new Block(List.of(), ops)));
        functions.addAll(List.of(reductions));
        Module module = new Module(new GpuTarget(), functions);
        module.resources().put(CommLoweringRules.resourceKey(world.name()), world);
        stub.reset();
        handlers = NcclCustomCalls.handlers(module, new NcclContext(
                new NcclCommunicators(NcclLibrary.load(), device), device, device));
        stub.reset();
    }

    static NativeStub stub() {
        NativeStub s = NativeStub.build("nccl_stub.c", "libnccl.so.2");
        System.setProperty(NcclLibrary.LIBRARY_PROPERTY, s.file.toString());
        return s;
    }

    /** Runs {@code op} through its handler. */
    List<Long> call(Op op, long[] operands, long[] results, long stream) {
        String target = ((Attr.Str) op.attr("call_target_name")).value();
        return handlers.get(target).call(op, operands, results, stream);
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
        attrs.put("call_target_name", new Attr.Str(NcclCustomCalls.PREFIX + name));
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

    /** A backend_config: keys and values alternating, strings as strings, numbers as i64. */
    static Map<String, Attr> config(Object... kv) {
        Map<String, Attr> c = new LinkedHashMap<>();
        c.put("comm", new Attr.Str("world"));
        for (int i = 0; i < kv.length; i += 2) {
            c.put((String) kv[i], kv[i + 1] instanceof String s ? new Attr.Str(s)
                    : Attr.Int.i64(((Number) kv[i + 1]).longValue()));
        }
        return c;
    }

    static TensorType t(DType dtype, long... dims) {
        return TensorType.of(dtype, dims);
    }
}
