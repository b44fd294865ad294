package dev.weft.backends.cli;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.fake.RanksFailedException;
import dev.weft.spi.CommBinding;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Map;

/**
 * {@code bin/weft run -np N --comm fake CLASS ARGS...}: runs {@code CLASS.main(ARGS)} once per fake rank, each on
 * its own thread with {@code Comm.world()} bound to that rank. Exits 1 when any rank failed, after printing each
 * failure.
 */
public final class FakeRanks {
    private FakeRanks() {
    }

    public static void main(String[] args) throws ReflectiveOperationException {
        if (args.length < 2) {
            System.err.println("usage: FakeRanks N CLASS [ARGS...]");
            System.exit(2);
        }
        int n = Integer.parseInt(args[0]);
        Method main = Class.forName(args[1]).getMethod("main", String[].class);
        String[] rest = Arrays.copyOfRange(args, 2, args.length);
        try {
            FakeWorld.run(n, world -> CommBinding.with(world, () -> invoke(main, rest)));
        } catch (RanksFailedException e) {
            for (Map.Entry<Integer, Throwable> f : e.failures().entrySet()) {
                System.err.println("rank " + f.getKey() + " failed: " + f.getValue());
            }
            System.exit(1);
        }
    }

    private static Void invoke(Method main, String[] args) {
        try {
            main.invoke(null, (Object) args.clone());
            return null;
        } catch (InvocationTargetException e) {
            switch (e.getCause()) {
                case RuntimeException r -> throw r;
                case Error err -> throw err;
                default -> throw new IllegalStateException(e.getCause());
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
