package dev.weft.spi;

import dev.weft.WeftException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Every setting Weft reads, in one place: each is a system property, an environment variable, or both (then the
 * property wins); a blank value counts as unset. Read a setting where it is used, never in a static initialiser:
 * a bad value is then a {@link WeftException} from the call that needs it, naming the setting, the value and what
 * it accepts, instead of an {@link ExceptionInInitializerError}.
 */
public enum Setting {
    /** How much the ranks' agreement is checked before they communicate. */
    CHECK("weft.check", "WEFT_CHECK", Accepts.choice("schedule", "off", "schedule", "strict")),
    /** Seconds a rank may be blocked in one communication before the job fails; 0 for never. */
    COMM_TIMEOUT("weft.comm.timeout", "WEFT_COMM_TIMEOUT", Accepts.whole(0, Integer.MAX_VALUE, 600)),
    /** Requests a rank may have started ({@code isend}, {@code irecv}) and not waited. */
    MAX_REQUESTS("weft.requests.max", "WEFT_MAX_REQUESTS", Accepts.whole(1, Integer.MAX_VALUE, 65536)),
    /** Operations each rank's flight recorder keeps. */
    FLIGHT_SIZE("weft.flight.size", "WEFT_FLIGHT_SIZE", Accepts.whole(1, 1 << 20, 256)),
    /** The directory flight recorder dumps are also written to. */
    FLIGHT_DIR("weft.flight.dir", "WEFT_FLIGHT_DIR", Accepts.text()),
    /** The directory each rank writes its timeline to at exit. */
    TIMELINE("weft.timeline", "WEFT_TIMELINE", Accepts.text()),
    /** Timeline events each rank keeps. */
    TIMELINE_EVENTS("weft.timeline.events", "WEFT_TIMELINE_EVENTS", Accepts.whole(1, Integer.MAX_VALUE - 8,
            1_000_000)),
    /**
     * Bytes of tensors made between two collections Weft asks for. Unset, 64 MiB or four of the largest buffer
     * made so far ({@code MemoryPacer.budget}): every buffer between two collections is fresh memory, which faults its
     * pages in; the MLP training step's steps 2-20 took 51-53 ms at 64 MiB against 77-84 ms at 256 MiB.
     */
    MEMORY_BUDGET("weft.memory.budget", "WEFT_MEMORY_BUDGET", Accepts.bytes(1L << 20, 64L << 20)),
    /** The compile target of {@code @Compile} methods ({@code cpu}, {@code gpu}); the pipeline checks it. */
    TARGET("weft.target", null, Accepts.text()),
    /** Executables kept per {@code @Compile} method. */
    COMPILE_CACHE("weft.compileCache.size", "WEFT_COMPILE_CACHE", Accepts.whole(1, Integer.MAX_VALUE, 64)),
    /**
     * The directory of the persistent compile cache (default {@code ~/.cache/weft}); {@code off} keeps none.
     */
    CACHE_DIR("weft.cache.dir", "WEFT_CACHE_DIR", Accepts.text()),
    /** The MPI thread level asked for, on fake ranks too. */
    MPI_THREAD_LEVEL(null, "WEFT_MPI_THREAD_LEVEL", Accepts.choice("single", "single", "funneled", "serialized",
            "multiple")),
    /** Seconds a fake world may run before its watchdog fails every rank still blocked. */
    FAKE_TIMEOUT("weft.fake.timeout", null, Accepts.seconds(120)),
    /** Bytes up to which a fake rank's send completes before its receive is posted. */
    FAKE_EAGER_LIMIT("weft.fake.eagerLimit", null, Accepts.whole(0, Long.MAX_VALUE, 0)),
    /**
     * The C compiler fused CPU loops are compiled with, a name on the {@code PATH} or a path (default {@code cc});
     * {@code off} runs them on the JVM only.
     */
    CC("weft.cc", "WEFT_CC", Accepts.text()),
    /** Whether fused loops may run through the Vector API. */
    VECTOR("weft.vector", null, Accepts.choice("true", "true", "false")),
    /** Which matrix multiply runs on the CPU: OpenBLAS when it loads, else Java; or Java always. */
    BLAS("weft.blas", null, Accepts.choice("native", "native", "java")),
    /** Whether the agent adds its compiler directives. */
    JIT_DIRECTIVES("weft.jit.directives", null, Accepts.choice("true", "true", "false")),
    /** The GPU architecture modules are printed for without a device, like {@code sm_90}. */
    GPU_ARCH("weft.gpu.arch", null, Accepts.matching("sm_[0-9]{1,4}", "like sm_90")),
    /** {@code 1} logs compiles and calls on stderr; any other value does not. */
    DEBUG(null, "WEFT_DEBUG", Accepts.text()),
    /** The directory every pipeline stage of a compile is written to. */
    DUMP(null, "WEFT_DUMP", Accepts.text()),
    /** The MPI library to load instead of the one found. */
    MPI_LIB(null, "WEFT_MPI_LIB", Accepts.text()),
    /** The NCCL library to load instead of the one found. */
    NCCL_LIB("weft.nccl.lib", "WEFT_NCCL_LIB", Accepts.text()),
    /** The cuBLAS library to load instead of the one found. */
    CUBLAS_LIB("weft.cublas.lib", "WEFT_CUBLAS_LIB", Accepts.text());

    private final String property;
    private final String env;
    private final Accepts accepts;

    Setting(String property, String env, Accepts accepts) {
        this.property = property;
        this.env = env;
        this.accepts = accepts;
    }

    /** The system property, or null when the setting has none. */
    public String property() {
        return property;
    }

    /** The environment variable, or null when the setting has none. */
    public String env() {
        return env;
    }

    /** What the setting accepts, like {@code a whole number from 1 to 1048576}. */
    public String accepts() {
        return accepts.description();
    }

    /** The value when unset (a String, Long or Double), or null when there is none. */
    public Object defaultValue() {
        return accepts.defaultValue();
    }

    /** A value it does not accept, or null when it accepts any (a directory, a library, a flag). */
    public String badValue() {
        return accepts.bad();
    }

    /**
     * The name the value is set by: the property's when it is set, else the variable's, which also names an unset
     * setting (the property's when there is no variable).
     */
    public String setBy() {
        if (property != null && System.getProperty(property) != null) {
            return property;
        }
        return env != null ? env : property;
    }

    /** The value set (trimmed), or null when unset or blank; text settings are not checked. */
    public String text() {
        String v = raw();
        return v == null || v.isBlank() ? null : v.strip();
    }

    /** Whether a flag setting is {@code 1}. */
    public boolean on() {
        return "1".equals(text());
    }

    /**
     * The whole number (or size in bytes) set, else the default.
     *
     * @throws WeftException if the value set is not one this setting accepts
     */
    public long number() {
        return (long) value();
    }

    /**
     * The choice set (lower case), else the default.
     *
     * @throws WeftException if the value set is not one of the choices
     */
    public String choice() {
        return (String) value();
    }

    /**
     * The positive number of seconds set, else the default.
     *
     * @throws WeftException if the value set is not a positive number
     */
    public double seconds() {
        return (double) value();
    }

    /**
     * The value set as its kind (String, Long or Double), else the default; checks it.
     *
     * @throws WeftException if the value set is not one this setting accepts
     */
    public Object value() {
        String v = text();
        if (v == null) {
            return accepts.defaultValue();
        }
        Object parsed = accepts.parse(v);
        if (parsed == null) {
            throw new WeftException(SourceLocation.UNKNOWN, setBy() + " must be " + accepts.description()
                    + ", got '" + raw() + "'");
        }
        return parsed;
    }

    private String raw() {
        String v = property == null ? null : System.getProperty(property);
        return v != null || env == null ? v : System.getenv(env);
    }

    /** What one setting accepts: how a value parses (null when it does not), its description and its default. */
    private record Accepts(Kind kind, long min, long max, List<String> choices, Object defaultValue) {
        enum Kind { TEXT, WHOLE, BYTES, CHOICE, SECONDS, MATCHING }

        static Accepts text() {
            return new Accepts(Kind.TEXT, 0, 0, List.of(), null);
        }

        static Accepts whole(long min, long max, long defaultValue) {
            return new Accepts(Kind.WHOLE, min, max, List.of(), defaultValue);
        }

        static Accepts bytes(long min, long defaultValue) {
            return new Accepts(Kind.BYTES, min, Long.MAX_VALUE, List.of(), defaultValue);
        }

        static Accepts choice(String defaultValue, String... choices) {
            return new Accepts(Kind.CHOICE, 0, 0, List.of(choices), defaultValue);
        }

        static Accepts seconds(double defaultValue) {
            return new Accepts(Kind.SECONDS, 0, 0, List.of(), defaultValue);
        }

        /** A value matching {@code regex}, described as {@code example}. */
        static Accepts matching(String regex, String example) {
            return new Accepts(Kind.MATCHING, 0, 0, List.of(regex, example), null);
        }

        String description() {
            return switch (kind) {
                case TEXT -> "any text";
                case WHOLE -> max == Long.MAX_VALUE ? "a whole number of at least " + min
                        : "a whole number from " + min + " to " + max;
                case BYTES -> "a size in bytes (a whole number, or one ending in k, m or g) of at least " + min;
                case CHOICE -> "one of " + String.join(", ", choices);
                case SECONDS -> "a positive number of seconds";
                case MATCHING -> choices.get(1);
            };
        }

        String bad() {
            return switch (kind) {
                case TEXT -> null;
                case WHOLE, BYTES -> "12x";
                case CHOICE -> "sometimes";
                case SECONDS -> "-1";
                case MATCHING -> "fast";
            };
        }

        Object parse(String v) {
            return switch (kind) {
                case TEXT -> v;
                case WHOLE -> {
                    Long n = wholeNumber(v);
                    yield n != null && n >= min && n <= max ? n : null;
                }
                case BYTES -> {
                    Long n = bytes(v);
                    yield n != null && n >= min ? n : null;
                }
                case CHOICE -> {
                    String c = v.toLowerCase(Locale.ROOT);
                    yield choices.contains(c) ? c : null;
                }
                case SECONDS -> {
                    Double s = decimal(v);
                    yield s != null && s > 0 && s < 1e9 ? s : null;
                }
                case MATCHING -> Pattern.matches(choices.get(0), v) ? v : null;
            };
        }

        private static Long wholeNumber(String v) {
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                return null;
            }
        }

        /** Bytes, or KiB, MiB or GiB with the suffix k, m or g (either case), as in -XX:MaxDirectMemorySize. */
        private static Long bytes(String v) {
            String lower = v.toLowerCase(Locale.ROOT);
            int shift = switch (lower.charAt(lower.length() - 1)) {
                case 'k' -> 10;
                case 'm' -> 20;
                case 'g' -> 30;
                default -> 0;
            };
            Long n = wholeNumber(shift == 0 ? lower : lower.substring(0, lower.length() - 1));
            return n != null && n >= 0 && n <= Long.MAX_VALUE >> shift ? n << shift : null;
        }

        private static Double decimal(String v) {
            try {
                return Double.parseDouble(v);
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }
}
