package dev.weft.ad;

import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.graph.RegionParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * {@code Weft.linearTranspose} (JAX's {@code linear_transpose}): reverse mode's tape of {@code f} at zeros, pulled
 * back on each call. A linear {@code f} keeps no value computed from its inputs on the tape (its JVP rules only
 * scale by constants), so a level below the recorder marks what the primal computation derives from the inputs,
 * and such a value on the tape is the sign of a nonlinear {@code f}. Values a {@code fori} or {@code cond} computes
 * are not marked (their bodies are not checked), so a linear loop is never refused.
 */
public final class LinearTranspose {
    private LinearTranspose() {
    }

    /** The transpose of {@code f}, linear in inputs of the dtypes and shapes of {@code primals}. */
    public static Function<List<Tensor>, List<Tensor>> of(Function<List<Tensor>, List<Tensor>> f,
                                                          List<Tensor> primals) {
        SourceLocation where = SourceLocation.capture();
        Derived derived = new Derived();
        LinearRecorder recorder = new LinearRecorder();
        JvpInterpreter jvp = new JvpInterpreter();
        List<Tensor> inputs = new ArrayList<>(primals.size());
        List<Tensor> duals = new ArrayList<>(primals.size());
        for (int k = 0; k < primals.size(); k++) {
            Tensor zero = Tensor.zeros(primals.get(k).dtype(), primals.get(k).shape());
            derived.mark(zero, "input " + k, where);
            recorder.assume(zero, recorder.inputVariance(primals.get(k)));
            Tensor in = zero.dtype().isFloating() ? recorder.input(TensorAccess.aval(zero),
                    recorder.inputVariance(primals.get(k))) : zero;
            inputs.add(in);
            duals.add(in == zero ? zero : jvp.dual(zero, in));
        }
        List<Tensor> outs = Interpreters.with(derived, () -> Interpreters.with(recorder, () -> Interpreters.with(jvp,
                () -> List.copyOf(f.apply(duals)))));
        derived.refuse(recorder.knownOperands());
        List<Aval> outAvals = new ArrayList<>(outs.size());
        List<Tensor> linearOuts = new ArrayList<>(outs.size());
        for (Tensor o : outs) {
            outAvals.add(TensorAccess.aval(jvp.primal(o)));
            linearOuts.add(jvp.tangent(o));
        }
        return cotangents -> {
            SourceLocation at = SourceLocation.capture();
            if (cotangents == null || cotangents.size() != outAvals.size()) {
                throw new ShapeException(at, "linearTranspose: " + (cotangents == null ? "null" : cotangents.size())
                        + " cotangents for " + outAvals.size() + " outputs");
            }
            for (int k = 0; k < outAvals.size(); k++) {
                Aval a = outAvals.get(k);
                Tensor c = cotangents.get(k);
                if (c == null || c.dtype() != a.dtype() || !Arrays.equals(c.shape(), a.shape().dims())) {
                    String message = "linearTranspose: cotangent " + k + " is "
                            + (c == null ? "null" : TensorAccess.aval(c)) + " but output " + k + " is " + a;
                    throw c != null && c.dtype() != a.dtype() ? new DTypeException(at, message)
                            : new ShapeException(at, message);
                }
            }
            return recorder.pullback(linearOuts, inputs, List.copyOf(cotangents));
        };
    }

    /** Marks the values computed from the inputs, passing every operation down. */
    private static final class Derived extends TransformLevel {
        private record From(String what, SourceLocation where) {
        }

        private final Map<Object, From> marked = new HashMap<>();

        void mark(Tensor t, String what, SourceLocation where) {
            marked.put(Linearized.key(t), new From(what, where));
        }

        @Override
        public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                                 SourceLocation where) {
            List<Tensor> out = Interpreters.under(this, () -> Bind.bindAt(where, prim, params, args));
            boolean fromInputs = args.stream().anyMatch(a -> marked.containsKey(Linearized.key(a)));
            if (fromInputs && !(params instanceof RegionParams)) {
                SourceLocation at = where != null ? where : SourceLocation.capture();
                out.forEach(o -> mark(o, prim.name(), at));
            }
            return out;
        }

        @Override
        protected Tensor pvary(Tensor t, CommHandle comm) {
            Tensor out = pvaryBelow(t, comm);
            From from = marked.get(Linearized.key(t));
            if (from != null) {
                marked.put(Linearized.key(out), from);
            }
            return out;
        }

        /** Refuses a marked value among {@code known}, the operands the tape keeps. */
        void refuse(List<Tensor> known) {
            for (Tensor k : known) {
                From from = marked.get(Linearized.key(k));
                if (from != null) {
                    throw new WeftException(from.where(), "linearTranspose: f is not linear in its inputs: the value"
                            + " of " + from.what() + " here depends on them and scales a derivative (as in x*x or"
                            + " exp(x)); a linear f only adds, negates, scales by constants, reshapes, slices and"
                            + " moves its inputs");
                }
            }
        }
    }
}
