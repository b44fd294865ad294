package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;

/**
 * Runs custom calls that the CPU executor does not know itself (the communication ops), found with
 * {@link java.util.ServiceLoader}, so that the executor needs no runtime of its own to run them.
 */
public interface CpuCustomCallProvider {
    /**
     * Registers in {@code registry} a handler for each custom call of {@code module} that this provider runs, its
     * communication ops on the communicators {@code comms} binds.
     */
    void register(Module module, CommBindings comms, CustomCallRegistry registry);
}
