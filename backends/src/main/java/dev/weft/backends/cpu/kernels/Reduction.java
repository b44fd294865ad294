package dev.weft.backends.cpu.kernels;

/** Associative reductions and the binary operation each folds with. */
public enum Reduction {
    SUM(BinaryOp.ADD), PROD(BinaryOp.MUL), MAX(BinaryOp.MAX), MIN(BinaryOp.MIN);

    private final BinaryOp combiner;

    Reduction(BinaryOp combiner) {
        this.combiner = combiner;
    }

    /** The elementwise operation that combines two partial results. */
    public BinaryOp combiner() {
        return combiner;
    }
}
