package dev.weft;

/** A program lowered to Weft's StableHLO-style module, as returned by {@link Weft#lower}. */
public interface LoweredModule {
    /**
     * The module as MLIR text in generic form: {@code func.func @main}, StableHLO tensor ops, communication as
     * {@code stablehlo.custom_call}. Parses with {@code mlir-opt --allow-unregistered-dialect}.
     */
    String toMlir();
}
