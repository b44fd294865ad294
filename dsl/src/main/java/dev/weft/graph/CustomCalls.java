package dev.weft.graph;

import dev.weft.CustomJvpRule;
import dev.weft.CustomVjpForward;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.CustomJvpParams;
import dev.weft.prim.CustomVjpParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Args;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * {@code Weft.customJvp} and {@code Weft.customVjp}: each call traces the function into a closed region
 * ({@link RegionTrace}, as a {@code fori} body is) and binds {@link Prims#CUSTOM_JVP_CALL} or
 * {@link Prims#CUSTOM_VJP_CALL} with it and the rules, so that whichever interpreter meets the node, now or when a
 * region holding it is evaluated again, runs the body or applies the rules.
 */
public final class CustomCalls {
    private CustomCalls() {
    }

    /** {@code f} with the forward-mode rule {@code rule}, defined at {@code defined}. */
    public static Function<List<Tensor>, List<Tensor>> customJvp(Function<List<Tensor>, List<Tensor>> f,
                                                                 CustomJvpRule rule, SourceLocation defined) {
        return args -> call(Prims.CUSTOM_JVP_CALL, "customJvp", f, args,
                (body, n) -> new CustomJvpParams(body, n, rule, defined));
    }

    /** {@code f} with the reverse-mode passes {@code fwd} and {@code bwd}, defined at {@code defined}. */
    public static Function<List<Tensor>, List<Tensor>> customVjp(
            Function<List<Tensor>, List<Tensor>> f, Function<List<Tensor>, CustomVjpForward> fwd,
            BiFunction<List<Tensor>, List<Tensor>, List<Tensor>> bwd, SourceLocation defined) {
        return args -> call(Prims.CUSTOM_VJP_CALL, "customVjp", f, args,
                (body, n) -> new CustomVjpParams(body, n, fwd, bwd, defined));
    }

    private static <P extends CustomCallParams> List<Tensor> call(Primitive<P> prim, String name,
                                                                  Function<List<Tensor>, List<Tensor>> f,
                                                                  List<Tensor> args,
                                                                  BiFunction<Region, Integer, P> params) {
        SourceLocation where = SourceLocation.capture();
        Args.noNulls(args, Weft.class, name + "(...).apply", "args");
        List<Aval> avals = new ArrayList<>(args.size());
        for (Tensor a : args) {
            avals.add(TensorAccess.aval(a));
        }
        RegionTrace trace = RegionTrace.open(avals, where);
        List<Tensor> own = trace.params();
        List<Tensor> out = Interpreters.with(trace, () -> List.copyOf(f.apply(own)));
        trace.close(out);
        List<Tensor> inputs = new ArrayList<>(args);
        inputs.addAll(trace.captured());
        return Bind.bindAt(where, prim, params.apply(trace.region(), args.size()), inputs);
    }
}
