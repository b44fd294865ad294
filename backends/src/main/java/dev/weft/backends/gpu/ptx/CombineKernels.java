package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Kernels that fold the contributions of several ranks with a custom reduce op's function, the local half of a
 * custom reduction on the GPU. The function is the module's private {@code (a, b) -> f(a, b)} on two 1-D tensors
 * of one dtype; its body must be elementwise ({@link ElementwiseKernels#emit}), so it applies to any number of
 * elements, not only the count it was traced for.
 */
public final class CombineKernels {
    private CombineKernels() {
    }

    /**
     * The kernel computing {@code out[i] = f(... f(f(g[0][i], g[1][i]), g[2][i]) ..., g[ranks-1][i])} for
     * {@code i < count}, where block {@code g[r]} holds {@code count} elements of the function's dtype starting
     * {@code r * count} elements after {@code gathered}. Parameters: {@code gathered}, then {@code out}. One thread
     * per element in a grid-stride loop; each thread folds the ranks in order in registers, reading each input
     * once and writing {@code out} once.
     *
     * @throws IllegalArgumentException if {@code function} is not such a function or {@code ranks < 1}
     */
    public static Kernel inRankOrder(Func function, long count, int ranks, String name) {
        DType t = dtype(function);
        if (ranks < 1) {
            throw new IllegalArgumentException("cannot combine " + ranks + " ranks");
        }
        List<Value> args = function.body().arguments();
        Value result = function.body().results().getFirst();
        long blockBytes = count * t.byteSize();
        PtxWriter w = new PtxWriter();
        String gathered = w.param(0), out = w.param(1);
        String[] loop = Indexing.gridStride(w);
        String i = loop[0], stride = loop[1];
        String[] labels = Indexing.open(w, i, count);
        String at = w.address(gathered, i, t.byteSize());
        String acc = w.reg(t);
        w.ins("mov." + moveType(t) + " " + acc + ", " + w.load(t, at));
        if (ranks > 1) {
            String r = w.reg(Reg.S32), more = w.reg(Reg.PRED), next = w.label();
            w.ins("mov.u32 " + r + ", 1");
            w.at(next);
            w.ins("add.s64 " + at + ", " + at + ", " + blockBytes);
            Map<Value, String> reg = new IdentityHashMap<>();
            reg.put(args.get(0), acc);
            reg.put(args.get(1), w.load(t, at));
            ElementwiseKernels.emit(w, function.body().ops().subList(0, function.body().ops().size() - 1), reg);
            String combined = reg.get(result);
            if (combined == null) {
                throw new IllegalArgumentException("reduce function " + function.name() + " returns no value");
            }
            w.ins("mov." + moveType(t) + " " + acc + ", " + combined);
            w.ins("add.s32 " + r + ", " + r + ", 1");
            w.ins("setp.lt.s32 " + more + ", " + r + ", " + ranks);
            w.ins("@" + more + " bra " + next);
        }
        w.store(t, w.address(out, i, t.byteSize()), acc);
        Indexing.close(w, i, stride, labels);
        return new Kernel(name, w.entry(name, 2), 2, Launch.gridStride(count));
    }

    /** The element type of a reduce function: two 1-D operands and one 1-D result of one dtype. */
    public static DType dtype(Func function) {
        List<Type> types = new ArrayList<>(function.argumentTypes());
        types.addAll(function.resultTypes());
        if (types.size() != 3 || !(types.getFirst() instanceof TensorType first)) {
            throw new IllegalArgumentException("reduce function " + function.name()
                    + " must take two tensors and return one, not " + function.argumentTypes() + " -> "
                    + function.resultTypes());
        }
        for (Type type : types) {
            if (!(type instanceof TensorType tt) || tt.dtype() != first.dtype() || tt.shape().rank() != 1) {
                throw new IllegalArgumentException("reduce function " + function.name()
                        + " must map two 1-D tensors of one dtype to a third, not " + function.argumentTypes()
                        + " -> " + function.resultTypes());
            }
        }
        return first.dtype();
    }

    /** The type suffix of {@code mov} between registers holding elements of {@code t}. */
    private static String moveType(DType t) {
        return switch (t) {
            case F32 -> "f32";
            case F64 -> "f64";
            case I32 -> "b32";
            case I64 -> "b64";
            case BOOL -> "pred";
        };
    }
}
