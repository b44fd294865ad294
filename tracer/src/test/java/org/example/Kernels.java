package org.example;

import dev.weft.Compile;
import dev.weft.Static;
import dev.weft.Tensor;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** User code with {@code @Compile} methods; each counter counts how often its body ran. */
class Kernels {
    static final AtomicInteger AXPY_BODY = new AtomicInteger();
    static final AtomicInteger SCALE_BODY = new AtomicInteger();
    static final AtomicInteger INNER_BODY = new AtomicInteger();
    static final AtomicInteger SIDE_EFFECTS = new AtomicInteger();
    static final AtomicInteger TAGGED_BODY = new AtomicInteger();
    static Tensor kept;

    private final float factor;

    Kernels(float factor) {
        this.factor = factor;
    }

    @Compile
    static Tensor axpy(Tensor a, Tensor x, Tensor y) {
        AXPY_BODY.incrementAndGet();
        return a.mul(x).add(y);
    }

    @Compile
    static Tensor scale(Tensor x, float k) {
        SCALE_BODY.incrementAndGet();
        return x.mul(k);
    }

    @Compile
    Tensor scaled(Tensor x) {
        return x.mul(factor);
    }

    /** Its stack map merges two of this package's classes: the agent must find their supertypes to insert the gate. */
    @Compile
    static Tensor mergesTypes(Tensor x, int k) {
        Object o = k > 0 ? new Tag("plus") : new Kernels(1);
        return o instanceof Tag ? x.add(1) : x.sub(1);
    }

    /**
     * Two-slot constants before the tensor: the gate must box each argument from its own local slot ({@code k} is
     * {@code @Static} because this module's test pipeline evaluates only a few primitives, not a traced scalar's
     * conversion).
     */
    @Compile
    Tensor shifted(long shift, @Static double k, Tensor x) {
        return x.mul(k).add(shift * factor);
    }

    @Compile
    static Tensor inner(Tensor x) {
        INNER_BODY.incrementAndGet();
        return x.add(x);
    }

    @Compile
    static Tensor outer(Tensor x, Tensor y) {
        return inner(x).mul(y);
    }

    @Compile
    static Tensor[] sumAndDifference(Tensor x, Tensor y) {
        return new Tensor[] {x.add(y), x.sub(y)};
    }

    @Compile
    static List<Tensor> swap(Tensor x, Tensor y) {
        return List.of(y, x);
    }

    @Compile
    static void sideEffect(Tensor x) {
        SIDE_EFFECTS.incrementAndGet();
    }

    @Compile
    static Tensor tagged(Tensor x, Tag tag) {
        TAGGED_BODY.incrementAndGet();
        return tag.name().equals("double") ? x.add(x) : x;
    }

    @Compile
    static Tensor withAnything(Tensor x, Object option) {
        return x;
    }

    @Compile
    static Tensor readsItem(Tensor x) {
        double v = x.item();
        return x.mul(v);
    }

    @Compile
    static Tensor keeps(Tensor x) {
        kept = x.add(x);
        return x;
    }

    @Compile
    static Tensor usesKept(Tensor x) {
        return x.add(kept);
    }

    @Compile
    static String describe(Tensor x) {
        return "never";
    }

    static Tensor overloaded(Tensor x) {
        return x;
    }

    static Tensor overloaded(Tensor x, float k) {
        return x.mul(k);
    }

    static Tensor overloaded(Tensor x, Tensor y) {
        return x.add(y);
    }
}
