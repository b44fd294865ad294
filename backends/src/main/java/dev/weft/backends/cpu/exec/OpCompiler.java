package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Op;

/**
 * Decodes one kind of op, once, into an instruction. Throws {@link IllegalArgumentException} for attributes or
 * types it cannot run; the builder reports it at the op's location.
 */
@FunctionalInterface
interface OpCompiler {
    Instruction compile(Op op, ProgramBuilder b);
}
