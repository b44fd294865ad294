package dev.weft.lowering.ir;

/** Types of the lowered module: ranked tensors and the ordering token. */
public sealed interface Type permits TensorType, TokenType {
    /** MLIR spelling, like {@code tensor<2x3xf32>} or {@code !stablehlo.token}. */
    String mlir();
}
