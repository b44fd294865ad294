package dev.weft.tracer;

import dev.weft.Tensor;
import java.util.List;

/** A compiled program: concrete tensors in (the graph's parameters, in order), concrete tensors out. */
public interface Executable {
    List<Tensor> run(List<Tensor> args);
}
