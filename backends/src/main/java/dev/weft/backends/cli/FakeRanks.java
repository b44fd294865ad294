package dev.weft.backends.cli;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.fake.RanksFailedException;
import dev.weft.spi.CommBinding;
import dev.weft.spi.RankClasses;
import java.io.IOException;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/weft run -np N --comm fake CLASS ARGS...}: runs {@code CLASS.main(ARGS)} once per fake rank, each on
 * its own thread with {@code Comm.world()} bound to that rank (see {@link FakeWorld} for how strict the ranks
 * are). Each rank runs its own copy of the user's classes ({@link RankClasses}: the class path's directories and
 * the entry holding CLASS, loaded once per rank), so each has its own static fields as under {@code mpirun}, where
 * each rank is a process; Weft's classes, the JDK's and other libraries' are shared. Exits 1 when any rank failed,
 * after printing each failure with its stack trace; a failure caused by another rank's shows its own frames and
 * names that rank instead of repeating its trace; ranks that ran out of memory are named once more, since the heap
 * they share may have been filled by another.
 */
public final class FakeRanks {
    private FakeRanks() {
    }

    public static void main(String[] args) {
        if (args.length < 2 || !args[0].matches("[1-9][0-9]{0,5}")) {
            System.err.println("usage: FakeRanks N CLASS [ARGS...]  (N a positive integer)");
            System.exit(2);
        }
        int n = Integer.parseInt(args[0]);
        UserClass.Entry entry;
        try {
            entry = UserClass.entry(args[1]);
        } catch (IllegalArgumentException e) {
            System.err.println("weft: " + e.getMessage());
            System.exit(2);
            return;
        }
        String[] rest = Arrays.copyOfRange(args, 2, args.length);
        try {
            run(n, entry, rest);
        } catch (RanksFailedException e) {
            Map<Throwable, Integer> rankOf = new IdentityHashMap<>();
            e.failures().forEach((rank, t) -> rankOf.put(t, rank));
            e.failures().forEach((rank, t) -> print(rank, t, rankOf));
            outOfMemory(e.failures());
            System.exit(1);
        }
    }

    /**
     * Runs {@code entry} with {@code args} on {@code n} fake ranks, each on its own copy of the user's classes
     * (shared when the entry's class cannot be copied, see {@link RankClasses#of}).
     *
     * @throws RanksFailedException if any rank failed
     */
    public static void run(int n, UserClass.Entry entry, String[] args) {
        RankClasses classes = RankClasses.of(entry.type());
        URLClassLoader[] loaders = new URLClassLoader[n];
        try {
            FakeWorld.run(n, world -> CommBinding.with(world, () -> invoke(onRank(entry, classes, world.rank(),
                    loaders), args)));
        } finally {
            close(loaders);
        }
    }

    /**
     * The entry point on {@code rank}: that of the rank's own copy of the user's classes, made into
     * {@code loaders[rank]} and the thread's context class loader, or the shared {@code entry} when the class
     * cannot be copied ({@code classes} null).
     */
    private static UserClass.Entry onRank(UserClass.Entry entry, RankClasses classes, int rank,
                                          URLClassLoader[] loaders) {
        if (classes == null) {
            return entry;
        }
        loaders[rank] = classes.loader();
        Thread.currentThread().setContextClassLoader(loaders[rank]);
        try {
            return UserClass.entry(Class.forName(entry.type().getName(), false, loaders[rank]));
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("rank " + rank + " cannot load its copy of " + entry.type().getName(), e);
        }
    }

    private static void close(URLClassLoader[] loaders) {
        for (URLClassLoader l : loaders) {
            if (l != null) {
                try {
                    l.close();
                } catch (IOException e) {
                    System.err.println("weft: " + e);
                }
            }
        }
    }

    private static void print(int rank, Throwable t, Map<Throwable, Integer> rankOf) {
        Integer causedBy = t.getCause() == null ? null : rankOf.get(t.getCause());
        System.err.print("rank " + rank + " failed: ");
        if (causedBy == null) {
            t.printStackTrace();
            return;
        }
        System.err.println(t);
        for (StackTraceElement f : t.getStackTrace()) {
            System.err.println("\tat " + f);
        }
        System.err.println("\tcaused by the failure of rank " + causedBy + " (" + (causedBy < rank ? "above" : "below")
                + ")");
    }

    /** Explains an {@link OutOfMemoryError} of some ranks: the heap they ran out of is every rank's. */
    private static void outOfMemory(Map<Integer, Throwable> failures) {
        List<Integer> ranks = failures.entrySet().stream().filter(f -> f.getValue() instanceof OutOfMemoryError)
                .map(Map.Entry::getKey).toList();
        if (!ranks.isEmpty()) {
            System.err.printf("weft: %s %s ran out of memory: fake ranks share this JVM's heap (%d MiB, set with "
                            + "-Xmx), so what filled it may be another rank's; under mpirun each rank has its own%n",
                    ranks.size() == 1 ? "rank" : "ranks",
                    String.join(", ", ranks.stream().map(String::valueOf).toList()),
                    Runtime.getRuntime().maxMemory() >> 20);
        }
    }

    private static Void invoke(UserClass.Entry entry, String[] args) {
        try {
            entry.run(args);
            return null;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
