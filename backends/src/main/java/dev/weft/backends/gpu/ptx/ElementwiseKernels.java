package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Kernels for {@code weft.fusion} and standalone elementwise ops: one thread per element of the fused shape in a
 * grid-stride loop, every intermediate in registers. Parameters: the op's operands in order, then its results.
 * An operand of one element while the shape has more (a rank-0 region argument, read by broadcasts) is loaded once
 * before the loop; constants in the region must be splats and become immediates.
 */
public final class ElementwiseKernels {
    private ElementwiseKernels() {
    }

    /** The kernel of a {@code weft.fusion} op. */
    public static Kernel fusion(Op op, String name) {
        Block region = op.regions().getFirst();
        return generate(name, region.arguments(), region.ops().subList(0, region.ops().size() - 1),
                region.results(), op.results().getFirst().tensorType().shape().size());
    }

    /** The kernel of one elementwise op ({@link Op#elementwise()}). */
    public static Kernel single(Op op, String name) {
        return generate(name, op.operands(), List.of(op), op.results(), op.result().tensorType().shape().size());
    }

    private static Kernel generate(String name, List<Value> inputs, List<Op> body, List<Value> results, long n) {
        PtxWriter w = new PtxWriter();
        int params = inputs.size() + results.size();
        String[] ptr = new String[params];
        for (int i = 0; i < params; i++) {
            ptr[i] = w.param(i);
        }
        Map<Value, String> reg = new IdentityHashMap<>();
        List<Integer> perElement = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            Value v = inputs.get(i);
            if (v.tensorType().shape().size() == n) {
                perElement.add(i);
            } else if (v.tensorType().shape().size() == 1) {
                reg.put(v, w.load(v.tensorType().dtype(), ptr[i]));
            } else {
                throw new IllegalArgumentException("elementwise input of " + v.tensorType().shape().size()
                        + " elements in a kernel over " + n);
            }
        }
        String[] loop = Indexing.gridStride(w);
        String i = loop[0], stride = loop[1];
        String[] labels = Indexing.open(w, i, n);
        for (int k : perElement) {
            Value v = inputs.get(k);
            DType t = v.tensorType().dtype();
            reg.put(v, w.load(t, w.address(ptr[k], i, t.byteSize())));
        }
        emit(w, body, reg);
        for (int r = 0; r < results.size(); r++) {
            DType t = results.get(r).tensorType().dtype();
            w.store(t, w.address(ptr[inputs.size() + r], i, t.byteSize()), reg.get(results.get(r)));
        }
        Indexing.close(w, i, stride, labels);
        return new Kernel(name, w.entry(name, params), params, Launch.gridStride(n));
    }

    /**
     * Emits {@code body} for one element: each op's results get registers in {@code reg}, which must already hold
     * every value the body uses from outside. The ops are elementwise ops, splat constants, {@code broadcast_in_dim}s
     * of one-element values, and {@code weft.fusion}s of those (whose regions are emitted inline).
     */
    static void emit(PtxWriter w, List<Op> body, Map<Value, String> reg) {
        for (Op op : body) {
            switch (op.name()) {
                case StableHlo.CONSTANT -> reg.put(op.result(), splat(w, op));
                case StableHlo.BROADCAST_IN_DIM -> {
                    String scalar = reg.get(op.operand(0));
                    if (scalar == null || op.operand(0).tensorType().shape().size() != 1) {
                        throw new IllegalArgumentException(
                                "broadcast of a value of more than one element in an elementwise body");
                    }
                    reg.put(op.result(), scalar);
                }
                case StableHlo.FUSION -> {
                    Block region = op.regions().getFirst();
                    for (int k = 0; k < op.operands().size(); k++) {
                        reg.put(region.arguments().get(k), use(reg, op.operand(k)));
                    }
                    emit(w, region.ops().subList(0, region.ops().size() - 1), reg);
                    for (int k = 0; k < op.results().size(); k++) {
                        reg.put(op.results().get(k), use(reg, region.results().get(k)));
                    }
                }
                default -> {
                    if (op.elementwise() == null) {
                        throw new IllegalArgumentException(
                                "non-elementwise op " + op.name() + " in an elementwise body");
                    }
                    reg.put(op.result(), ScalarOps.emit(w, op, op.operands().stream().map(v -> use(reg, v))
                            .toList()));
                }
            }
        }
    }

    private static String use(Map<Value, String> reg, Value v) {
        String r = reg.get(v);
        if (r == null) {
            throw new IllegalArgumentException("elementwise body uses a value it does not define");
        }
        return r;
    }

    /** A constant whose elements are all equal, as a register holding that value. */
    private static String splat(PtxWriter w, Op constant) {
        if (!(constant.attr("value") instanceof Attr.Dense d)) {
            throw new IllegalArgumentException("constant without a dense value");
        }
        DType t = d.type().dtype();
        MemorySegment data = d.data();
        int es = t.byteSize();
        for (long k = 1; k < d.type().shape().size(); k++) {
            if (MemorySegment.mismatch(data, 0, es, data, k * es, (k + 1) * es) >= 0) {
                throw new IllegalArgumentException("a fusion may hold only splat constants");
            }
        }
        String r = w.reg(t);
        switch (t) {
            case F32 -> w.ins("mov.f32 " + r + ", " + Imm.of(t, data.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0)));
            case F64 -> w.ins("mov.f64 " + r + ", " + Imm.of(t, data.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 0)));
            case I32 -> w.ins("mov.s32 " + r + ", " + data.get(ValueLayout.JAVA_INT_UNALIGNED, 0));
            case I64 -> w.ins("mov.s64 " + r + ", " + data.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            case BOOL -> {
                String h = w.reg(Reg.U16);
                w.ins("mov.u16 " + h + ", " + data.get(ValueLayout.JAVA_BYTE, 0));
                w.ins("setp.ne.u16 " + r + ", " + h + ", 0");
            }
        }
        return r;
    }
}
