package dev.weft.backends.cpu.exec;

/** One pre-decoded op: reads its operand slots and defines its result slots in a frame. */
@FunctionalInterface
interface Instruction {
    void execute(CpuFrame f);
}
