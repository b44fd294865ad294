package dev.weft.batching;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.ad.TransformLevel;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The batch level of {@code vmap} (JAX's {@code BatchTrace}): a value of the function being batched is a
 * {@link Batched}, a value of the level below that holds every batch element along its batch axis, and looks like
 * one element to the function (its aval lacks that axis). A value without a batch axis is the level below's value
 * itself. An operation with a batched operand is its {@link BatchRule}, run one level down; one without is bound
 * one level down as it is, except point-to-point messages, which always carry the batch (a receiver cannot know
 * whether its peer's operand was batched).
 */
final class BatchInterpreter extends TransformLevel {
    /** The batch axis of a value that has none (JAX's {@code not_mapped}). */
    static final int UNBATCHED = -1;

    /** A batched value: {@code value} of the level below, batched along {@code dim}; {@code aval} is one element's. */
    record Batched(Aval aval, Tensor value, int dim, BatchInterpreter owner) implements Traced {
        @Override
        public String describe() {
            return "a batched tensor " + aval;
        }

        @Override
        public String usedAfterEnd() {
            return "after the Weft.vmap call that batched it returned; return it from the function instead of"
                    + " keeping it";
        }

        @Override
        public String readHint() {
            return " inside a function batched by Weft.vmap, where it stands for every batch element at once; use"
                    + " Weft.cond or Tensor.where for data-dependent choices";
        }
    }

    private final long size;
    /** The sent tensor of each send this level started, by request, until its wait (which keeps it alive). */
    private final Map<Tensor, Tensor> sends = new IdentityHashMap<>();
    /** The receives this level started, by request: their messages carry the batch. */
    private final Set<Tensor> receives = Collections.newSetFromMap(new IdentityHashMap<>());

    BatchInterpreter(long size) {
        this.size = size;
    }

    /** The number of batch elements. */
    long size() {
        return size;
    }

    /** The value of this level for {@code value} (of the level below) batched along {@code dim}, or unbatched. */
    Tensor wrap(Tensor value, int dim) {
        if (dim == UNBATCHED) {
            return value;
        }
        Aval whole = TensorAccess.aval(value);
        Aval one = new Aval(whole.dtype(), Shape.of(BatchAxes.remove(whole.shape().dims(), dim)));
        return TensorAccess.traced(new Batched(one, value, dim, this));
    }

    private Batched mine(Tensor t) {
        return TensorAccess.traced(t) instanceof Batched b && b.owner() == this ? b : null;
    }

    /** The value of the level below that {@code t} stands for. */
    Tensor value(Tensor t) {
        Batched b = mine(t);
        return b == null ? t : b.value();
    }

    /** The batch axis of {@link #value}{@code (t)}, or {@link #UNBATCHED}. */
    int dim(Tensor t) {
        Batched b = mine(t);
        return b == null ? UNBATCHED : b.dim();
    }

    /** A batched value is made varying element by element: its value below, along the same axis. */
    @Override
    protected Tensor pvary(Tensor t, CommHandle comm) {
        Batched b = mine(t);
        return b == null ? pvaryBelow(t, comm) : wrap(pvaryBelow(b.value(), comm), b.dim());
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        List<Tensor> values = new ArrayList<>(args.size());
        List<Integer> dims = new ArrayList<>(args.size());
        boolean any = false;
        for (Tensor a : args) {
            values.add(value(a));
            dims.add(dim(a));
            any |= dim(a) != UNBATCHED;
        }
        if (!any && !BatchRules.batchesEveryApplication(prim)) {
            Tensor[] in = values.toArray(Tensor[]::new);
            return Interpreters.under(this, () -> Bind.bind(prim, params, in));
        }
        SourceLocation at = where != null ? where : SourceLocation.capture();
        BatchRule.Result r = Interpreters.under(this, () -> batch(prim, params,
                new Application(values, dims, outAvals, at, this)));
        List<Tensor> out = new ArrayList<>(r.outputs().size());
        for (int k = 0; k < r.outputs().size(); k++) {
            out.add(wrap(r.outputs().get(k), r.dims().get(k)));
        }
        return out;
    }

    private static <P extends Params> BatchRule.Result batch(Primitive<P> prim, Params params, Application app) {
        BatchRule<P> rule = BatchRules.rule(prim).orElseThrow(() -> new WeftException(app.where(), prim.name()
                + " cannot be batched by Weft.vmap" + BatchRules.whyUnbatched(prim).map(w -> " (" + w + ")")
                .orElse("")));
        return rule.batch(prim.paramsType().cast(params), app);
    }

    /** Notes that this level started a send of {@code sent} (the batched message) with {@code request}. */
    void startedSend(Tensor request, Tensor sent) {
        sends.put(request, sent);
    }

    /** Notes that this level started a receive of a batched message with {@code request}. */
    void startedReceive(Tensor request) {
        receives.add(request);
    }

    /** The batched message of a send this level started with {@code request}, forgotten now, or {@code null}. */
    Tensor takeSend(Tensor request) {
        return sends.remove(request);
    }

    /** Whether this level started the receive of {@code request}, forgotten now. */
    boolean takeReceive(Tensor request) {
        return receives.remove(request);
    }
}
