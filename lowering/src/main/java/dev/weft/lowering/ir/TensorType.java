package dev.weft.lowering.ir;

import dev.weft.DType;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;

/** A ranked tensor type. */
public record TensorType(DType dtype, Shape shape) implements Type {
    public static TensorType of(Aval aval) {
        return new TensorType(aval.dtype(), aval.shape());
    }

    public static TensorType of(DType dtype, long... dims) {
        return new TensorType(dtype, Shape.of(dims));
    }

    public Aval aval() {
        return new Aval(dtype, shape);
    }

    public long byteSize() {
        return shape.size() * dtype.byteSize();
    }

    @Override
    public String mlir() {
        StringBuilder b = new StringBuilder("tensor<");
        for (int i = 0; i < shape.rank(); i++) {
            b.append(shape.dim(i)).append('x');
        }
        return b.append(dtype.mlirName()).append('>').toString();
    }

    @Override
    public String toString() {
        return mlir();
    }
}
