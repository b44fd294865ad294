package dev.weft.spi;

import dev.weft.WeftException;
import java.util.List;
import java.util.Locale;

/** Tuning settings a user gives as a system property or, failing that, as an environment variable. */
public final class Settings {
    private Settings() {
    }

    /**
     * The text set by system property {@code property}, else by environment variable {@code env}, else
     * {@code null}; blank counts as unset.
     */
    public static String text(String property, String env) {
        Given g = given(property, env);
        return g == null || g.value().isBlank() ? null : g.value().trim();
    }

    /**
     * The whole number set by system property {@code property}, else by environment variable {@code env}, else
     * {@code defaultValue}.
     *
     * @throws WeftException if the value set is not a whole number of at least {@code min}
     */
    public static long wholeNumber(String property, String env, long min, long defaultValue) {
        Given g = given(property, env);
        if (g == null) {
            return defaultValue;
        }
        try {
            long n = Long.parseLong(g.value().trim());
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with what was expected
        }
        throw new WeftException(SourceLocation.UNKNOWN, g.name() + " must be a whole number of at least " + min
                + ", got '" + g.value() + "'");
    }

    /**
     * The size in bytes set by system property {@code property}, else by environment variable {@code env}, else
     * {@code defaultValue}: a whole number of bytes, or of KiB, MiB or GiB with the suffix {@code k}, {@code m} or
     * {@code g} (either case), as in {@code -XX:MaxDirectMemorySize=512m}.
     *
     * @throws WeftException if the value set is not such a size of at least {@code min} bytes
     */
    public static long bytes(String property, String env, long min, long defaultValue) {
        Given g = given(property, env);
        if (g == null) {
            return defaultValue;
        }
        String v = g.value().trim().toLowerCase(Locale.ROOT);
        int shift = v.isEmpty() ? 0 : switch (v.charAt(v.length() - 1)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            default -> 0;
        };
        try {
            long n = Long.parseLong(shift == 0 ? v : v.substring(0, v.length() - 1));
            if (n >= 0 && n <= Long.MAX_VALUE >> shift && n << shift >= min) {
                return n << shift;
            }
        } catch (NumberFormatException e) {
            // reported below with what was expected
        }
        throw new WeftException(SourceLocation.UNKNOWN, g.name() + " must be a size in bytes (a whole number, or one"
                + " ending in k, m or g) of at least " + min + ", got '" + g.value() + "'");
    }

    /**
     * The value set by system property {@code property}, else by environment variable {@code env}, else
     * {@code defaultValue}; case and surrounding blanks are ignored.
     *
     * @throws WeftException if the value set is not one of {@code allowed} (lower case)
     */
    public static String choice(String property, String env, List<String> allowed, String defaultValue) {
        Given g = given(property, env);
        if (g == null) {
            return defaultValue;
        }
        String v = g.value().trim().toLowerCase(Locale.ROOT);
        if (allowed.contains(v)) {
            return v;
        }
        throw new WeftException(SourceLocation.UNKNOWN, g.name() + " must be one of " + String.join(", ", allowed)
                + ", got '" + g.value() + "'");
    }

    /** A setting's value and where it came from (the property's or the variable's name, for errors). */
    private record Given(String name, String value) {
    }

    /** The system property {@code property} if set, else the environment variable {@code env}, else null. */
    private static Given given(String property, String env) {
        String value = System.getProperty(property);
        if (value != null) {
            return new Given(property, value);
        }
        value = System.getenv(env);
        return value == null ? null : new Given(env, value);
    }
}
