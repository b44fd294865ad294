package dev.weft.backends.cli;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * The class named on {@code bin/weft}'s command line: a bare name that is an example's ({@code Pi}) means
 * {@code dev.weft.examples.Pi}; any other name, with or without a package, is the user's class on the class path.
 * A name that does not resolve is a one-line {@link IllegalArgumentException}, which the commands print as
 * {@code weft: ...} and exit 2, instead of a stack trace per rank.
 *
 * <p>{@code main(NAME)} is {@code bin/weft run}'s check before it starts ranks under {@code mpirun}: it exits 0
 * when NAME has an entry point it can run, else prints the reason and exits 2.
 */
public final class UserClass {
    private static final String EXAMPLES = "dev.weft.examples.";

    private UserClass() {
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: UserClass NAME");
            System.exit(2);
        }
        try {
            entry(args[0]);
        } catch (IllegalArgumentException e) {
            System.err.println("weft: " + e.getMessage());
            System.exit(2);
        }
    }

    /** The class {@code name} means, loaded without running its static initialiser. */
    public static Class<?> load(String name) {
        ClassLoader loader = UserClass.class.getClassLoader();
        if (!name.contains(".")) {
            try {
                return Class.forName(EXAMPLES + name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                // not an example: the user's class in the default package
            }
        }
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("class " + name + " is not on the class path" + (name.contains(".")
                    ? "" : " and is not an example (Pi, Ring, Heat, DataParallel, ...)")
                    + "; pass the directory or jar that holds it with -cp");
        } catch (LinkageError e) {
            throw new IllegalArgumentException("class " + name + " cannot be loaded: " + e);
        }
    }

    /**
     * The entry point of the class {@code name} means, chosen as the {@code java} launcher of JDK 25 does: a
     * non-private {@code main(String[])}, else a non-private {@code main()}, declared or inherited; an instance
     * {@code main} runs on a new instance made with the class's non-private no-argument constructor.
     */
    public static Entry entry(String name) {
        return entry(load(name));
    }

    /** The entry point of class {@code c}, chosen as {@link #entry(String)} chooses it. */
    public static Entry entry(Class<?> c) {
        Method m = find(c, String[].class);
        if (m == null) {
            m = find(c);
        }
        if (m == null) {
            throw new IllegalArgumentException("class " + c.getName() + " has no main method (void main(String[] args)"
                    + " or void main())");
        }
        Constructor<?> make = null;
        if (!Modifier.isStatic(m.getModifiers())) {
            try {
                make = c.getDeclaredConstructor();
            } catch (NoSuchMethodException e) {
                make = null;
            }
            if (make == null || Modifier.isPrivate(make.getModifiers())) {
                throw new IllegalArgumentException("class " + c.getName() + " has an instance main method but no"
                        + " non-private constructor without arguments");
            }
            make.setAccessible(true);
        }
        m.setAccessible(true);
        return new Entry(c, m, make);
    }

    private static Method find(Class<?> c, Class<?>... params) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            try {
                Method m = k.getDeclaredMethod("main", params);
                return Modifier.isPrivate(m.getModifiers()) ? null : m;
            } catch (NoSuchMethodException e) {
                // look in the superclass
            }
        }
        return null;
    }

    /**
     * The entry point of class {@code type}: {@code method}, on a new instance from {@code constructor} unless it
     * is static.
     */
    public record Entry(Class<?> type, Method method, Constructor<?> constructor) {
        /** Runs the entry point with {@code args}; what it throws is thrown unwrapped. */
        public void run(String[] args) throws Throwable {
            try {
                Object target = constructor == null ? null : constructor.newInstance();
                if (method.getParameterCount() == 1) {
                    method.invoke(target, (Object) args.clone());
                } else {
                    method.invoke(target);
                }
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
