package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Op;
import java.lang.foreign.MemorySegment;

/**
 * Runs the {@code stablehlo.custom_call}s of one {@code call_target_name}.
 *
 * <p>{@code operands} has one entry per op operand: the row-major buffer of a tensor, or
 * {@link CustomCallRegistry#TOKEN} for a {@code !stablehlo.token}. Operand buffers must not be written.
 * {@code results} has one entry per op result: for a tensor, a buffer of the result's byte size from the
 * executor's pool that the handler may fill; {@code null} for a token. The handler either fills the buffer it was
 * given (which stays under the executor's management) or replaces the entry by another buffer that it will never
 * write again (the one it was given then goes back to the pool); token entries are ignored.
 * Failures are thrown as exceptions; the executor adds the op's source location to any that is not already a
 * {@link dev.weft.WeftException}.
 */
@FunctionalInterface
public interface CustomCallHandler {
    void call(Op op, MemorySegment[] operands, MemorySegment[] results);

    /**
     * This handler specialised to {@code op}, asked once when the executable is built (decode attributes there,
     * not on every call); by default the handler itself.
     */
    default CustomCallHandler bind(Op op) {
        return this;
    }

    /**
     * Whether the call may keep using an operand buffer after it returns (an asynchronous send, say): such
     * buffers are never reused or overwritten by the executor. True unless a handler knows better.
     */
    default boolean retainsOperands(Op op) {
        return true;
    }

    /**
     * This bound handler as a direct call {@code accept(operand, result)} on {@code op}'s one tensor operand and
     * one tensor result, or null (the default) when it has none. Asked once, when the executable is built, of ops
     * with exactly one tensor operand and one tensor result besides any tokens; the executor then runs the op
     * through it instead of {@link #call}, without the arrays. The call reads {@code operand} only while it runs,
     * and fills {@code result}.
     */
    default OperandResultCall operandResultCall(Op op) {
        return null;
    }

    /**
     * For a bound call that starts an asynchronous transfer (a nonblocking collective), what lets the transfer
     * progress: the executor runs it after each step it runs before the step that takes the call's tensor result
     * (the request the completing call consumes). Null, the default, for other calls.
     */
    default Runnable progress(Op op) {
        return null;
    }

    /**
     * Whether the bound call keeps each result buffer it is offered and replaces (for a later call of its own):
     * the executor then neither reuses the offered buffer nor leaves the replacement to the collector, but pools
     * the replacement as its own buffer of the result's size once the result is dead. False unless a handler
     * knows better.
     */
    default boolean keepsOfferedResults(Op op) {
        return false;
    }

    /**
     * Whether {@link #operandResultCall} may be given one buffer as both operand and result (it reads all of the
     * operand before writing the result). False unless a handler knows better.
     */
    default boolean writesOverOperand(Op op) {
        return false;
    }
}
