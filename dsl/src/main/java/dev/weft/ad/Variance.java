package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.spi.CommHandle;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Over which communicators a value is the same on every rank (JAX's varying/invariant type), and on what that
 * rests. For each communicator a value is either <em>varying</em>, or <em>invariant</em> given a set of
 * <em>conditions</em>: values from outside the differentiated function (constants, captured tensors) whose own
 * invariance is a matter of fact, settled when needed by comparing them across the ranks ({@link Agreement}). An
 * empty set of conditions is invariance by construction (a collective's result, a {@code replicated} input).
 *
 * <p>Communicators not named explicitly share one entry ({@code elsewhere}), so a constant is invariant over every
 * communicator, and a function input varying over every one, without listing them.
 */
final class Variance {
    /** Varying over every communicator: a function's input, a received message. */
    static final Variance VARYING = new Variance(Map.of(), null);
    /** Invariant over every communicator by construction: a value computed from nothing. */
    static final Variance INVARIANT = new Variance(Map.of(), Set.of());

    /** Per communicator named: the conditions of its invariance, {@code null} for varying. */
    private final Map<CommHandle, Set<Tensor>> named;
    /** The same for every other communicator. */
    private final Set<Tensor> elsewhere;

    private Variance(Map<CommHandle, Set<Tensor>> named, Set<Tensor> elsewhere) {
        this.named = named;
        this.elsewhere = elsewhere;
    }

    /** A value from outside: invariant over every communicator exactly when {@code value} is. */
    static Variance outside(Tensor value) {
        return new Variance(Map.of(), identitySet(Set.of(value)));
    }

    /** Invariant over {@code comms} by construction, varying elsewhere ({@code Comm.replicated}). */
    static Variance replicatedOver(Set<CommHandle> comms) {
        Map<CommHandle, Set<Tensor>> named = new LinkedHashMap<>();
        comms.forEach(c -> named.put(c, Set.of()));
        return new Variance(named, null);
    }

    /** The conditions of invariance over {@code comm}, or {@code null} where varying over it. */
    Set<Tensor> over(CommHandle comm) {
        return named.containsKey(comm) ? named.get(comm) : elsewhere;
    }

    /** The communicators named here (any other behaves as {@code elsewhere}). */
    Set<CommHandle> named() {
        return named.keySet();
    }

    /** Both at once: invariant over a communicator where both are, on the conditions of both. */
    Variance meet(Variance o) {
        if (o == this || o.equals(INVARIANT)) {
            return this;
        }
        if (equals(INVARIANT)) {
            return o;
        }
        Map<CommHandle, Set<Tensor>> m = new LinkedHashMap<>();
        for (CommHandle c : union(named.keySet(), o.named.keySet())) {
            m.put(c, both(over(c), o.over(c)));
        }
        return new Variance(m, both(elsewhere, o.elsewhere));
    }

    /** This, made invariant over {@code comm} by construction (a collective's result). */
    Variance invariantOver(CommHandle comm) {
        return with(comm, Set.of());
    }

    /** This, made varying over {@code comm}. */
    Variance varyingOver(CommHandle comm) {
        return with(comm, null);
    }

    private Variance with(CommHandle comm, Set<Tensor> conditions) {
        Map<CommHandle, Set<Tensor>> m = new LinkedHashMap<>(named);
        m.put(comm, conditions);
        return new Variance(m, elsewhere);
    }

    private static Set<Tensor> both(Set<Tensor> a, Set<Tensor> b) {
        if (a == null || b == null) {
            return null;
        }
        if (a.isEmpty() || a.equals(b)) {
            return b;
        }
        if (b.isEmpty()) {
            return a;
        }
        Set<Tensor> s = identitySet(a);
        s.addAll(b);
        return Collections.unmodifiableSet(s);
    }

    private static Set<CommHandle> union(Set<CommHandle> a, Set<CommHandle> b) {
        Set<CommHandle> s = new LinkedHashSet<>(a);
        s.addAll(b);
        return s;
    }

    /** A set of conditions in the order they were met (tensors compare by identity). */
    private static Set<Tensor> identitySet(Set<Tensor> of) {
        return new LinkedHashSet<>(of);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Variance v && v.named.equals(named) && Objects.equals(v.elsewhere, elsewhere);
    }

    @Override
    public int hashCode() {
        return named.hashCode() * 31 + Objects.hashCode(elsewhere);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Variance[");
        named.forEach((c, s) -> b.append(c.name()).append(s == null ? ": varying, " : ": invariant, "));
        return b.append("elsewhere: ").append(elsewhere == null ? "varying" : "invariant").append(']').toString();
    }
}
