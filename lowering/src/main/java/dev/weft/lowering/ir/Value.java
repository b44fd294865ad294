package dev.weft.lowering.ir;

/** An SSA value: a block argument or an op result. Compared by identity. */
public final class Value {
    private final Type type;

    public Value(Type type) {
        this.type = type;
    }

    public Type type() {
        return type;
    }

    /** The tensor type; fails for a token. */
    public TensorType tensorType() {
        if (type instanceof TensorType t) {
            return t;
        }
        throw new IllegalStateException("not a tensor: " + type.mlir());
    }

    @Override
    public String toString() {
        return "Value(" + type.mlir() + ")@" + Integer.toHexString(System.identityHashCode(this));
    }
}
