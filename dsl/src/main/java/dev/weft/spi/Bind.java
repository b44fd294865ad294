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
        Interpreter interp = Interpreters.current();
        List<Aval> in = new ArrayList<>(args.length);
        for (Tensor t : args) {
            Traced traced = TensorAccess.traced(t);
            if (traced != null && !Interpreters.isActive(traced.owner())) {
                throw new TracedValueException(SourceLocation.capture(), prim.name() + ": a traced tensor "
                        + traced.aval() + " is used after its trace ended;"
                        + " return it from the @Compile method instead of keeping it");
            }
            in.add(TensorAccess.aval(t));
        }
        SourceLocation where = interp.isTracing() ? SourceLocation.capture() : null;
        List<Aval> out;
        try {
            out = prim.infer(in, params, where);
        } catch (WeftException e) {
            throw e.location().isUnknown() ? Errors.relocate(e, SourceLocation.capture()) : e;
        }
        return interp.bind(prim, params, List.of(args), out, where);
    }
}
