package dev.weft.spi;

import dev.weft.Tensor;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import java.util.ArrayList;
import java.util.List;

/** Applies a primitive to tensors: checks shapes (errors name the user's line), then asks the current interpreter. */
public final class Bind {
    private Bind() {
    }

    public static List<Tensor> bind(Primitive<?> prim, Params params, Tensor... args) {
        return bindAt(Interpreters.isTracing() && Interpreters.current().keepsLocations() ? SourceLocation.capture()
                : null, prim, params, List.of(args));
    }

    /**
     * {@link #bind} recorded at {@code where} (the user's line of the operation: a graph evaluator passes each
     * node's own), {@code null} for none (eager).
     */
    public static List<Tensor> bindAt(SourceLocation where, Primitive<?> prim, Params params, List<Tensor> args) {
        Interpreter interp = Interpreters.current();
        List<Aval> in = new ArrayList<>(args.size());
        for (Tensor t : args) {
            Traced traced = TensorAccess.traced(t);
            if (traced != null && !Interpreters.isActive(traced.owner())) {
                Interpreter eager = Interpreters.isTracing() ? null : traced.eager();
                if (eager == null && !interp.lifts(traced)) {
                    throw new TracedValueException(SourceLocation.capture(), prim.name() + ": " + traced.describe()
                            + " is used " + traced.usedAfterEnd());
                }
                interp = eager != null ? eager : interp;
            }
            in.add(TensorAccess.aval(t));
        }
        List<Aval> out;
        try {
            out = prim.infer(in, params, where);
        } catch (WeftException e) {
            throw e.location().isUnknown() ? Errors.relocate(e, SourceLocation.capture()) : e;
        }
        return interp.bind(prim, params, List.copyOf(args), out, where);
    }
}
