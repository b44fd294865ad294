package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Module;

/** One named transformation or check of a lowered module, applied in place. */
public interface Pass {
    /** The short name used in pipelines and dump files ({@code dce}, {@code cse}, ...). */
    String name();

    void run(Module m);
}
