package dev.weft.spi;

import dev.weft.WeftException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Refuses a static field of a class shared by fake ranks given a new value by a second rank of one world: under {@code mpirun}
 * each rank's process has its own statics, on fake ranks such a class has one set for all, so the ranks would read
 * each other's values (a {@code static int rank}, a {@code static Comm}, a per-rank array) and give another answer
 * than MPI without an error.
 *
 * <p>The fake runtime tags each rank's thread (and the threads it starts) with {@link #onRank}; the agent calls
 * {@link #written} before each {@code putstatic} of the user's classes that every rank shares (see
 * {@link RankClasses#isSharedUserClass}), outside static initialisers, which run once for all ranks. The first
 * rank to write a field is remembered; a write on another rank of the same world that changes the field's value
 * (by {@link Objects#equals}: a new array or object is a change) throws at the writing line, since some rank would
 * then read a value it did not write. Writing the value the field holds (each rank recording the same line, say)
 * passes.
 * Classes copied per rank ({@link RankClasses}) are not watched: each copy has its own statics. Without the agent
 * nothing is watched; a write on a thread of no rank is not checked.
 */
public final class SharedStatics {
    /** A rank of one fake world. */
    private record Rank(long world, int rank) {
    }

    private static final InheritableThreadLocal<Rank> RANK = new InheritableThreadLocal<>();
    private static final Map<String, Rank> FIRST_WRITER = new ConcurrentHashMap<>();
    private static final AtomicLong WORLDS = new AtomicLong();
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    /** Set once a fake world has started: until then a write costs one volatile read. */
    private static volatile boolean anyRanks;

    private SharedStatics() {
    }

    /** A new fake world's identity, for {@link #onRank}. */
    public static long newWorld() {
        anyRanks = true;
        return WORLDS.incrementAndGet();
    }

    /** Tags the calling thread, and the threads it will start, as rank {@code rank} of world {@code world}. */
    public static void onRank(long world, int rank) {
        RANK.set(new Rank(world, rank));
    }

    /**
     * Called by the agent's code before the calling method writes {@code value} into the static field
     * {@code field} ({@code pkg.Class.name}), which holds {@code current}; primitives come boxed.
     *
     * @throws WeftException at the writing line when another rank of this thread's world wrote the field before
     *                       and {@code value} is not {@code current}
     */
    public static void written(Object value, Object current, String field) {
        if (!anyRanks) {
            return;
        }
        Rank me = RANK.get();
        if (me == null) {
            return;
        }
        Rank first = FIRST_WRITER.putIfAbsent(field, me);
        if (first == null || first.equals(me)) {
            return;
        }
        if (first.world() != me.world()) {
            FIRST_WRITER.replace(field, first, me);
            return;
        }
        if (Objects.equals(value, current)) {
            return;
        }
        SourceLocation where = WALKER.walk(frames -> frames.skip(1).findFirst().map(SourceLocation::of)
                .orElse(SourceLocation.UNKNOWN));
        String owner = field.substring(0, field.lastIndexOf('.'));
        throw new WeftException(where, "static field " + field + " written on rank " + me.rank() + " after rank "
                + first.rank() + " wrote it: fake ranks are threads of one JVM and share the statics of " + owner
                + " (loaded once for every rank), whereas under mpirun each rank is a process with its own, so the"
                + " ranks would read each other's values; keep per-rank state in locals or instance fields, or let"
                + " each rank run its own copy of the class (bin/weft run and @Ranks test methods copy the user's"
                + " classes per rank; a lambda given to RankRunner.run runs on the shared class)");
    }
}
