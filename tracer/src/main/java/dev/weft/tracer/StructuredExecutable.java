package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.Trees;
import java.util.List;

/**
 * An executable whose method returns a tree: the program's outputs are its leaves, rebuilt with the structure the
 * traced call returned.
 */
record StructuredExecutable(Executable program, Trees.Structure structure) implements Executable {
    @Override
    public List<Tensor> run(List<Tensor> args) {
        return program.run(args);
    }

    /** The method's result for {@code args}. */
    Object result(List<Tensor> args) {
        return structure.rebuild(program.run(args));
    }

    @Override
    public void close() {
        program.close();
    }
}
