package dev.weft;

import dev.weft.spi.SourceLocation;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A region of one thread whose tensors are freed when it closes, instead of when the garbage collector finds them
 * unreachable: {@code try (Scope s = Weft.scope()) { ... }}.
 *
 * <p>Every concrete tensor made on the opening thread while the scope is its innermost open one (by an eager
 * operation, a factory such as {@link Tensor#of}, or as a result of a {@link Compile} call) belongs to the scope.
 * {@link #close} frees those still reachable at once (the garbage collector may free a dropped one earlier):
 * their buffers go back to Weft's pool (large ones) or to the C library, so a loop that opens a scope per
 * iteration runs in constant memory without asking for a garbage collection. Tensors made before the scope
 * opened, or on other threads, are not touched.
 *
 * <p>{@link #keep} takes a tensor out of the scope: it then belongs to the enclosing scope (freed when that one
 * closes) or, with none, to the garbage collector. A tensor that a {@code @Compile} program captures as a
 * constant is kept automatically, since the cached program goes on reading it.
 *
 * <p>Using a freed tensor (an operation on it, passing it to a compiled call, reading its elements) raises a
 * {@link WeftException} naming the line of the use and the line where the scope closed; its dtype and shape stay
 * readable. Wait for a nonblocking send of a tensor before its scope closes.
 *
 * <p>Scopes nest and are confined to the thread that opened them: each thread (each fake rank) has its own
 * stack of scopes. Closing a scope that is not the thread's innermost open one, or using a scope from another
 * thread, is a {@link WeftException}.
 */
public final class Scope implements AutoCloseable {
    /** Open scopes of all threads: while there are none, making a tensor does not look for one. */
    private static final AtomicInteger OPEN = new AtomicInteger();
    private static final ThreadLocal<Scope> INNERMOST = new ThreadLocal<>();

    private final Scope parent;
    private final Thread owner;
    private final SourceLocation opened;
    /**
     * The tensors made in this scope and not kept, held weakly: one the program drops before the scope closes (the
     * intermediates of a long eager loop) is still freed by the garbage collector.
     */
    private final List<WeakReference<Tensor>> tensors = new ArrayList<>();
    private boolean closed;

    private Scope(Scope parent, SourceLocation opened) {
        this.parent = parent;
        this.owner = Thread.currentThread();
        this.opened = opened;
    }

    static Scope open(SourceLocation where) {
        Scope s = new Scope(INNERMOST.get(), where);
        INNERMOST.set(s);
        OPEN.incrementAndGet();
        return s;
    }

    /** Adds a tensor just made to the innermost open scope of this thread, if any. */
    static void track(Tensor t) {
        if (OPEN.get() != 0) {
            Scope s = INNERMOST.get();
            if (s != null) {
                s.tensors.add(new WeakReference<>(t));
            }
        }
    }

    /**
     * Takes {@code t} out of this scope so that closing it does not free {@code t}: {@code t} moves to the
     * enclosing scope, or to the garbage collector when there is none. A tensor this scope does not hold (made
     * outside it, already kept, or traced) is returned as it is.
     *
     * @return {@code t}
     */
    public Tensor keep(Tensor t) {
        checkUsable("keep");
        if (tensors.removeIf(r -> r.get() == t) && parent != null) {
            parent.tensors.add(new WeakReference<>(t));
        }
        return t;
    }

    /** {@link #keep(Tensor)} for each tensor of {@code ts}; returns {@code ts}. */
    public List<Tensor> keep(List<Tensor> ts) {
        ts.forEach(this::keep);
        return ts;
    }

    /** Tensors this scope will free when it closes (those made in it, not kept and still reachable). */
    public int size() {
        return (int) tensors.stream().filter(r -> r.get() != null).count();
    }

    /**
     * Frees the tensors of this scope and makes the enclosing scope the innermost again. Closing a closed scope
     * does nothing.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        checkUsable("close");
        if (INNERMOST.get() != this) {
            throw new WeftException(SourceLocation.capture(), "this scope (opened at " + opened
                    + ") cannot close while a scope opened inside it is still open: close the inner one first");
        }
        closed = true;
        INNERMOST.set(parent);
        OPEN.decrementAndGet();
        String why = "it was freed when its scope (opened at " + opened + ") closed at " + SourceLocation.capture();
        for (WeakReference<Tensor> r : tensors) {
            Tensor t = r.get();
            if (t != null) {
                t.free(why);
            }
        }
        tensors.clear();
    }

    private void checkUsable(String what) {
        if (Thread.currentThread() != owner) {
            throw new WeftException(SourceLocation.capture(), "Scope." + what + ": the scope opened at " + opened
                    + " belongs to thread " + owner.getName() + ", not " + Thread.currentThread().getName());
        }
        if (closed && !what.equals("close")) {
            throw new WeftException(SourceLocation.capture(), "Scope." + what + ": the scope opened at " + opened
                    + " is closed");
        }
    }
}
