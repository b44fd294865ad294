package dev.weft.tracer;

import dev.weft.Tensor;
import java.util.List;

/** A compiled program: concrete tensors in (the graph's parameters, in order), concrete tensors out. */
public interface Executable {
    List<Tensor> run(List<Tensor> args);

    /**
     * Releases what this executable holds that the garbage collector does not free (device memory, loaded
     * modules); does nothing by default. The compile cache calls it once, when it evicts the executable, after
     * which no run starts; a run that started before may still be in progress and must complete normally.
     */
    default void close() {
    }
}
