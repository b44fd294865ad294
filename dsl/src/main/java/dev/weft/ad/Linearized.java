package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.graph.RegionTrace;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A region (a loop body, a cond branch) traced for reverse mode on the duals of a fresh forward-mode level over a
 * fresh recorder ({@link ReverseLoop}, {@link ReverseCond}): its trace, the recorder's tape, the tape's linear
 * inputs and outputs, and the known values the tape keeps, split into the region's own (residuals, which the
 * forward region must return) and those from outside it (invariants, passed as they are).
 */
record Linearized(RegionTrace trace, LinearRecorder inner, List<LinearRecorder.Linear> linearIn,
                  List<LinearRecorder.Linear> linearOut, List<Tensor> residuals, List<Tensor> invariants) {
    /** The region traced by {@code trace} with tape {@code inner}, its kept values split, each once, in order. */
    static Linearized of(RegionTrace trace, LinearRecorder inner, List<LinearRecorder.Linear> linearIn,
                         List<LinearRecorder.Linear> linearOut) {
        Map<Object, Tensor> residuals = new LinkedHashMap<>(), invariants = new LinkedHashMap<>();
        for (Tensor k : inner.knownOperands()) {
            boolean own = TensorAccess.traced(k) instanceof RegionTrace.Value v && v.owner() == trace;
            (own ? residuals : invariants).putIfAbsent(key(k), k);
        }
        return new Linearized(trace, inner, linearIn, linearOut, List.copyOf(residuals.values()),
                List.copyOf(invariants.values()));
    }

    /** {@code primal} with a fresh linear input of {@code inner} as its tangent, which {@code in} gets. */
    static Tensor dual(JvpInterpreter jvp, LinearRecorder inner, Tensor primal, List<LinearRecorder.Linear> in) {
        Tensor t = inner.input(TensorAccess.aval(primal), inner.variance(primal));
        in.add(inner.linear(t));
        return jvp.dual(primal, t);
    }

    /** A tensor's identity for residuals: its traced value (records compare by variable), else the tensor. */
    static Object key(Tensor t) {
        Traced tr = TensorAccess.traced(t);
        return tr != null ? tr : t;
    }
}
