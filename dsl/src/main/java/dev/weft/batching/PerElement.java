package dev.weft.batching;

import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.graph.ControlFlow;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A primitive applied to one batch element at a time, in a {@code fori} over the batch: each iteration slices its
 * element out of every batched operand, applies the primitive unchanged, and writes the outputs into element
 * {@code i} of batched results. For a {@code cond} on a batched predicate, so that each element runs only the branch
 * it takes (a select of both branches would let a NaN of the other one through, also into a later gradient), and
 * for dynamic slices at batched starts (a gather, which Weft has no primitive for).
 */
final class PerElement {
    private PerElement() {
    }

    static BatchRule.Result apply(Primitive<?> prim, Params params, Application app) {
        long n = app.size();
        if (n > Integer.MAX_VALUE) {
            throw new ShapeException(app.where(), "vmap: " + prim.name() + " runs once per batch element here, and"
                    + " a batch of " + n + " elements is more than a loop counts");
        }
        List<Tensor> operands = new ArrayList<>(app.args().size());
        for (int i = 0; i < app.args().size(); i++) {
            operands.add(app.batched(i) ? BatchAxes.move(app.arg(i), app.dim(i), 0) : app.arg(i));
        }
        List<Tensor> init = new ArrayList<>(app.outAvals().size());
        for (Aval a : app.outAvals()) {
            init.add(Tensor.zeros(a.dtype(), BatchAxes.insert(a.shape().dims(), 0, n)));
        }
        List<Tensor> out = ControlFlow.fori(0, (int) n, init, (i, acc) -> {
            List<Tensor> one = new ArrayList<>(operands.size());
            for (int k = 0; k < operands.size(); k++) {
                one.add(app.batched(k) ? BatchAxes.element(operands.get(k), i) : operands.get(k));
            }
            List<Tensor> results = Bind.bindAt(app.where(), prim, params, one);
            List<Tensor> next = new ArrayList<>(acc.size());
            for (int k = 0; k < acc.size(); k++) {
                next.add(BatchAxes.setElement(acc.get(k), results.get(k), i));
            }
            return next;
        }, app.where());
        return new BatchRule.Result(out, Collections.nCopies(out.size(), 0));
    }
}
