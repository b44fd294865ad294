package dev.weft.backends.cpu;

/** Adds eager rules for more primitives (communication) to the CPU interpreter; found with ServiceLoader. */
public interface EagerRuleProvider {
    void register(CpuEagerInterpreter interpreter);
}
