package dev.weft.backends;

import dev.weft.LoweredModule;
import dev.weft.lowering.Lowering;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.lowering.passes.StageListener;
import dev.weft.spi.WeftRuntime;
import dev.weft.tracer.CompileGate;
import dev.weft.tracer.agent.WeftAgent;

/** {@code Weft.install()} and {@code Weft.lower(...)}: the agent from the tracer, lowering with the target's pipeline. */
public final class DefaultWeftRuntime implements WeftRuntime {
    @Override
    public boolean install() {
        return WeftAgent.install();
    }

    @Override
    public LoweredModule lower(String target, Class<?> owner, String method, Object... args) {
        Target t = Targets.named(target);
        return Lowering.lower(CompileGate.trace(owner, method, args), t, StageListener.NONE);
    }
}
