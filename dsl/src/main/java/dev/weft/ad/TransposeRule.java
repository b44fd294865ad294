package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.spi.Aval;
import dev.weft.spi.Params;
import java.util.List;

/**
 * A primitive's transpose, for the applications that are linear in some inputs (those reverse mode records): the
 * cotangents of the linear inputs given those of the outputs. Known inputs (constants of the linear map) are
 * given; linear ones are {@code null}.
 *
 * @param <P> the primitive's parameter type
 */
@FunctionalInterface
public interface TransposeRule<P extends Params> {
    /**
     * @param cotangents the cotangent of each output (zeros where an output had none)
     * @param known      each input's value when it is a constant of the map, {@code null} when it is linear
     * @param inputs     the inputs' avals
     * @return the cotangent of each input (entries for known inputs are ignored; {@code null} means zero)
     */
    List<Tensor> transpose(P params, List<Tensor> cotangents, List<Tensor> known, List<Aval> inputs);
}
