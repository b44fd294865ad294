package dev.weft.spi;

import dev.weft.LoweredModule;

/** The services behind {@link dev.weft.Weft} that live in higher layers; found with {@link java.util.ServiceLoader}. */
public interface WeftRuntime {
    /**
     * Installs the agent that intercepts {@code @Compile} methods into the running JVM; idempotent.
     *
     * @return whether this call installed it (false when it was installed already)
     */
    boolean install();

    /** Traces and lowers {@code owner.method} for {@code target} ("cpu" or "gpu"). */
    LoweredModule lower(String target, Class<?> owner, String method, Object... args);
}
