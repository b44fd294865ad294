package dev.weft.spi;

import java.io.File;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which classes are the user's, and a copy of them per fake rank, so that fake ranks (threads of one JVM) get
 * per-rank static fields as {@code mpirun}'s processes do, as SimGrid's SMPI privatises a program's globals.
 *
 * <p>The user's classes are those found in the user's class path entries: every directory of the JVM's class path
 * ({@code java.class.path}: a project's {@code classes} and {@code test-classes}, the directory given to
 * {@code bin/weft run -cp}) and the entry holding the <em>home</em> class (the class whose {@code main} or test
 * method the ranks run, even in a jar). Never the user's, and so shared by every rank: the JDK's, Weft's own (the
 * class path entries holding Weft's modules, and every class of a package those entries hold), and the test
 * frameworks' and the build tools' ({@code org.junit}, {@code org.assertj}, {@code org.opentest4j},
 * {@code org.apiguardian}, {@code net.bytebuddy}, {@code org.apache.maven.surefire}). Tensors, communicators and
 * assertion errors thus cross between a rank's copy and the rest. Libraries in jars other than the home's are
 * shared too: a library's statics (caches, a JNI library, which one JVM can load only once) are shared on fake
 * ranks, unlike under {@code mpirun}.
 *
 * <p>{@link #of} gives the user's classes of one run; {@link #loader} a rank's copy of them, a class loader that
 * defines each of the user's classes itself from the same class path entries (child first) and delegates every
 * other class to the home's loader. Each run's loaders are new, so each run's ranks start with fresh statics,
 * as new processes do.
 *
 * <p>Not copied, and so still shared: a class loaded by a loader other than the JVM's application class loader,
 * and what the ranks reach other than through their copy (a lambda given to the ranks is an instance of the shared
 * class that wrote it). {@link SharedStatics} reports such a class's static field written by two ranks.
 */
public final class RankClasses {
    /** Under an MPI launcher each process is one rank: nothing is shared, nothing watched. */
    private static final boolean UNDER_MPI = MpiLaunch.launched();
    private static final String[] SHARED_PREFIXES = {
        "java.", "javax.", "jdk.", "sun.", "com.sun.", "org.junit.", "org.assertj.", "org.opentest4j.",
        "org.apiguardian.", "net.bytebuddy.", "org.apache.maven.surefire."
    };
    /** One class of each of Weft's modules a program's class path may hold; their entries are Weft's. */
    private static final String[] WEFT_ANCHORS = {
        "dev/weft/Tensor.class", "dev/weft/tracer/CompileGate.class", "dev/weft/lowering/Target.class",
        "dev/weft/backends/cli/FakeRanks.class", "dev/weft/testing/RankRunner.class"
    };
    private static volatile RankClasses system;

    private final ClassLoader parent;
    private final URL[] user;
    private final Set<String> userEntries;
    /** Weft's class path entries, to look packages up in (no parent: only these entries). */
    private final URLClassLoader weft;
    /** Whether Weft's entries hold a package ({@code a/b/}), by package. */
    private final Map<String, Boolean> weftPackages;

    private RankClasses(ClassLoader parent, List<URL> user, URLClassLoader weft, Map<String, Boolean> weftPackages) {
        this.parent = parent;
        this.user = user.toArray(URL[]::new);
        this.userEntries = new LinkedHashSet<>();
        for (URL u : user) {
            userEntries.add(u.toString());
        }
        this.weft = weft;
        this.weftPackages = weftPackages;
    }

    /**
     * The user's classes of a run of {@code home} on fake ranks, or {@code null} when {@code home} cannot be
     * copied per rank: it was not loaded by the JVM's application class loader from an entry of
     * {@code java.class.path}, or is one of Weft's, the JDK's or a test framework's.
     */
    public static RankClasses of(Class<?> home) {
        ClassLoader app = ClassLoader.getSystemClassLoader();
        URL entry = entryOf(home.getProtectionDomain());
        if (home.getClassLoader() != app || entry == null || isSharedName(home.getName())) {
            return null;
        }
        RankClasses system = system();
        if (!system.classPath().contains(entry.toString()) || system.weftEntries().contains(entry.toString())) {
            return null;
        }
        List<URL> user = new ArrayList<>(List.of(system.user));
        if (!system.userEntries.contains(entry.toString())) {
            user.add(entry);
        }
        RankClasses c = new RankClasses(app, user, system.weft, system.weftPackages);
        return c.isUsers(home.getName()) ? c : null;
    }

    /** The user's classes of the JVM's class path: its directories that hold none of Weft's modules. */
    static RankClasses system() {
        RankClasses s = system;
        return s != null ? s : initSystem();
    }

    private static synchronized RankClasses initSystem() {
        RankClasses s = system;
        if (s == null) {
            ClassLoader app = ClassLoader.getSystemClassLoader();
            List<URL> weft = new ArrayList<>();
            for (String anchor : WEFT_ANCHORS) {
                URL at = app.getResource(anchor);
                URL entry = at == null ? null : entryOf(at, anchor);
                if (entry != null && !weft.contains(entry)) {
                    weft.add(entry);
                }
            }
            List<URL> user = new ArrayList<>();
            for (URL entry : classPathEntries()) {
                if (entry.toString().endsWith("/") && !weft.contains(entry)) {
                    user.add(entry);
                }
            }
            s = new RankClasses(app, user, new URLClassLoader(weft.toArray(URL[]::new), null),
                    new ConcurrentHashMap<>());
            // Looks a package up once, so that no later look-up (in a class load) loads the look-up's classes.
            s.isUsers(RankClasses.class.getName());
            system = s;
        }
        return s;
    }

    /**
     * Whether a class the JVM's application class loader defines from {@code domain} is one of the user's, and
     * so shared by every fake rank unless a rank's copy runs instead: for the agent, which watches the static
     * fields of such classes ({@link SharedStatics}). Never under an MPI launcher ({@link MpiLaunch}), whose
     * processes are one rank each.
     *
     * @param className the class's binary name ({@code a.b.C})
     */
    public static boolean isSharedUserClass(ClassLoader loader, ProtectionDomain domain, String className) {
        if (UNDER_MPI || loader != ClassLoader.getSystemClassLoader() || isSharedName(className)) {
            return false;
        }
        RankClasses s = system();
        URL entry = entryOf(domain);
        return entry != null && s.userEntries.contains(entry.toString()) && s.isUsers(className);
    }

    /**
     * A new copy of the user's classes, for one rank; close it when the run is over. The loader has no name, so
     * stack traces show the user's frames as under {@code mpirun}.
     */
    public URLClassLoader loader() {
        return new RankLoader(this);
    }

    /** Whether {@code className} is one of the user's classes (copied per rank when found in their entries). */
    boolean isUsers(String className) {
        if (isSharedName(className)) {
            return false;
        }
        int dot = className.lastIndexOf('.');
        String pkg = dot < 0 ? "" : className.substring(0, dot).replace('.', '/') + "/";
        return pkg.isEmpty() || !weftPackages.computeIfAbsent(pkg, p -> weft.findResource(p) != null);
    }

    private static boolean isSharedName(String className) {
        for (String p : SHARED_PREFIXES) {
            if (className.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    private Set<String> classPath() {
        Set<String> all = new LinkedHashSet<>();
        for (URL u : classPathEntries()) {
            all.add(u.toString());
        }
        return all;
    }

    private Set<String> weftEntries() {
        Set<String> all = new LinkedHashSet<>();
        for (URL u : weft.getURLs()) {
            all.add(u.toString());
        }
        return all;
    }

    private static List<URL> classPathEntries() {
        List<URL> entries = new ArrayList<>();
        for (String e : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
            if (e.isEmpty()) {
                continue;
            }
            Path p = Path.of(e).toAbsolutePath().normalize();
            if (Files.exists(p)) {
                try {
                    entries.add(p.toUri().toURL());
                } catch (MalformedURLException ex) {
                    throw new UncheckedIOException(ex);
                }
            }
        }
        return entries;
    }

    /** The class path entry of a class's protection domain, normalised as {@link #classPathEntries} are. */
    private static URL entryOf(ProtectionDomain domain) {
        CodeSource source = domain == null ? null : domain.getCodeSource();
        if (source == null || source.getLocation() == null || !"file".equals(source.getLocation().getProtocol())) {
            return null;
        }
        try {
            return Path.of(source.getLocation().toURI()).toAbsolutePath().normalize().toUri().toURL();
        } catch (URISyntaxException | MalformedURLException | IllegalArgumentException e) {
            return null;
        }
    }

    /** The entry of a class path resource {@code name} found at {@code at} (a file in a directory or a jar). */
    private static URL entryOf(URL at, String name) {
        String s = at.toString();
        try {
            if (s.startsWith("jar:") && s.endsWith("!/" + name)) {
                s = s.substring(4, s.length() - name.length() - 2);
            } else if (s.startsWith("file:") && s.endsWith(name)) {
                s = s.substring(0, s.length() - name.length());
            } else {
                return null;
            }
            return Path.of(URI.create(s)).toAbsolutePath().normalize().toUri().toURL();
        } catch (MalformedURLException | IllegalArgumentException | FileSystemNotFoundException e) {
            return null;
        }
    }

    /** One rank's copy: the user's classes defined here from their entries, every other class the parent's. */
    private static final class RankLoader extends URLClassLoader {
        static {
            ClassLoader.registerAsParallelCapable();
        }

        private final RankClasses classes;

        RankLoader(RankClasses classes) {
            super(classes.user, classes.parent);
            this.classes = classes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!classes.isUsers(name)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try {
                        c = findClass(name);
                    } catch (ClassNotFoundException notTheUsers) {
                        return super.loadClass(name, resolve);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
