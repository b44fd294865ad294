package dev.weft.lowering.ir;

/** StableHLO's {@code !stablehlo.token}: threads the order of side effects through a function. */
public record TokenType() implements Type {
    public static final TokenType INSTANCE = new TokenType();

    @Override
    public String mlir() {
        return "!stablehlo.token";
    }

    @Override
    public String toString() {
        return mlir();
    }
}
