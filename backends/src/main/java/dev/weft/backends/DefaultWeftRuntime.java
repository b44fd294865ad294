package dev.weft.backends;

import dev.weft.LoweredModule;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.WeftRuntime;
import dev.weft.tracer.CompileGate;
import dev.weft.tracer.agent.WeftAgent;

/** {@code Weft.install()} and {@code Weft.lower(...)}: the agent from the tracer, lowering with the standard pipeline. */
public final class DefaultWeftRuntime implements WeftRuntime {
    @Override
    public boolean install() {
        return WeftAgent.install();
    }

    @Override
    public LoweredModule lower(String target, Class<?> owner, String method, Object... args) {
        return Lowering.lower(CompileGate.trace(owner, method, args), target, StageListener.NONE);
    }
}
