package dev.weft.backends.cpu.exec;

import java.lang.foreign.MemorySegment;

/**
 * A custom call run directly on its one tensor operand and its one tensor result
 * ({@link CustomCallHandler#operandResultCall}): it reads {@code operand} only while it runs and fills
 * {@code result}. Declared with its buffer types, not as a {@code BiConsumer}, so that a compiled loop calls each
 * implementation's own method: with an erased interface method every layer (a recorder around a runtime's call,
 * say) has a bridge too, which the JIT compiles as a method of its own.
 */
@FunctionalInterface
public interface OperandResultCall {
    void accept(MemorySegment operand, MemorySegment result);
}
