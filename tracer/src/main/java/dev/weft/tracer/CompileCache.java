package dev.weft.tracer;

import dev.weft.spi.Setting;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The executables compiled for one {@code @Compile} method, by call key, at most {@link #limit} of them
 * ({@link Setting#COMPILE_CACHE}: system property {@code weft.compileCache.size} or environment variable
 * {@code WEFT_COMPILE_CACHE}; default 64, read at each addition).
 * Adding one beyond the limit evicts the least recently used and {@linkplain Executable#close closes} it; a later
 * call with its key compiles again.
 *
 * <p>Recency is counted in compiles: a hit marks its entry with the number of compiles so far, and eviction takes
 * the entry with the lowest mark, so among entries last used between the same two compiles the choice is
 * arbitrary. The mark is written only by the first hit of an entry after a compile, so that the calls of a
 * program whose signatures no longer change write nothing shared. Lookups take no lock; additions take the
 * cache's.
 */
final class CompileCache {

    private static final class Entry {
        final Executable executable;
        /** {@link #compiles} when this entry was added or last hit. */
        volatile long lastUse;

        Entry(Executable executable, long lastUse) {
            this.executable = executable;
            this.lastUse = lastUse;
        }
    }

    private final Map<Object, Entry> entries = new ConcurrentHashMap<>();
    /** Executables added so far; written under the cache's lock. */
    private volatile long compiles;

    /**
     * The most executables kept per method.
     *
     * @throws dev.weft.WeftException if {@link Setting#COMPILE_CACHE} is set to a bad value
     */
    static int limit() {
        return (int) Setting.COMPILE_CACHE.number();
    }

    /** The executable cached for {@code key}, or {@code null}. */
    Executable get(Object key) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        long now = compiles;
        if (e.lastUse != now) {
            e.lastUse = now;
        }
        return e.executable;
    }

    /**
     * Caches {@code executable} for {@code key} unless another thread cached one first, and returns the one
     * cached; the one left out, and the one evicted to make room, are closed.
     */
    Executable add(Object key, Executable executable) {
        Executable dropped;
        Executable kept;
        synchronized (this) {
            Entry present = entries.get(key);
            if (present != null) {
                dropped = executable;
                kept = present.executable;
            } else {
                dropped = entries.size() >= limit() ? evictLeastRecentlyUsed() : null;
                long now = compiles + 1;
                entries.put(key, new Entry(executable, now));
                compiles = now;
                kept = executable;
            }
        }
        if (dropped != null) {
            dropped.close();
        }
        return kept;
    }

    /** Executables cached. */
    int size() {
        return entries.size();
    }

    private Executable evictLeastRecentlyUsed() {
        Map.Entry<Object, Entry> oldest = null;
        for (Map.Entry<Object, Entry> e : entries.entrySet()) {
            if (oldest == null || e.getValue().lastUse < oldest.getValue().lastUse) {
                oldest = e;
            }
        }
        entries.remove(oldest.getKey());
        return oldest.getValue().executable;
    }
}
