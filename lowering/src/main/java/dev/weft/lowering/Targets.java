package dev.weft.lowering;

import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/** The registry of targets: every {@link Target} listed as a service on the class path, found once. */
public final class Targets {
    private Targets() {
    }

    private static final class Discovered {
        static final List<Target> ALL = ServiceLoader.load(Target.class, Targets.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).sorted(Comparator.comparing(Target::name)).toList();
    }

    /** Every target on the class path, by name. */
    public static List<Target> all() {
        return Discovered.ALL;
    }

    /**
     * The target called {@code name}.
     *
     * @throws WeftException at the caller's line, naming the known targets, when there is none of that name
     */
    public static Target named(String name) {
        for (Target t : all()) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        throw new WeftException(SourceLocation.capture(), "unknown target '" + name + "'; the targets are "
                + all().stream().map(t -> "'" + t.name() + "'").collect(Collectors.joining(", ")));
    }
}
