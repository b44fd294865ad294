package dev.weft.spi;

import dev.weft.WeftException;
import java.util.ServiceLoader;
import java.util.function.Supplier;

/**
 * Which world communicator {@code Comm.world()} returns on this thread. A thread inherits the binding of the
 * thread that created it, so the threads a fake rank starts see that rank's world, as threads of an MPI process
 * see the process's.
 */
public final class CommBinding {
    private static final InheritableThreadLocal<CommHandle> BOUND = new InheritableThreadLocal<>();
    /**
     * The process's world once made; made on first use, not by a class initialiser, so that a failure to make it
     * (a bad setting) reaches each caller as itself, not as an {@link ExceptionInInitializerError}.
     */
    private static volatile CommHandle processWorld;

    private CommBinding() {
    }

    /** The world of this thread: the bound one (fake ranks), else the process's. */
    public static CommHandle world() {
        CommHandle h = BOUND.get();
        if (h != null) {
            return h;
        }
        h = processWorld;
        return h != null ? h : makeProcessWorld();
    }

    private static synchronized CommHandle makeProcessWorld() {
        if (processWorld == null) {
            processWorld = ServiceLoader.load(WorldProvider.class).findFirst()
                    .map(WorldProvider::world)
                    .orElseThrow(() -> new WeftException(SourceLocation.capture(),
                            "no communicator runtime on the class path: add dev.weft:weft-backends"));
        }
        return processWorld;
    }

    /** The world bound to this thread (a fake rank), or {@code null} if it uses the process's. */
    public static CommHandle bound() {
        return BOUND.get();
    }

    /** Runs {@code body} with {@code world} as this thread's world (one fake rank), and of threads it starts. */
    public static <T> T with(CommHandle world, Supplier<T> body) {
        CommHandle prev = BOUND.get();
        BOUND.set(world);
        try {
            return body.get();
        } finally {
            BOUND.set(prev);
        }
    }
}
