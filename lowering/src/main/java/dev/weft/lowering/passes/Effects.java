package dev.weft.lowering.passes;

import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.Effect;

/** Which ops have effects that passes must neither remove, merge nor reorder. */
public final class Effects {
    private Effects() {
    }

    /**
     * True for an op whose {@link Op#effect} is not pure, an op that produces or consumes a
     * {@code !stablehlo.token}, and an op whose regions contain such an op.
     */
    public static boolean hasEffect(Op op) {
        return IrWalk.ops(op).anyMatch(Effects::hasOwnEffect);
    }

    /** {@link #hasEffect} for {@code op} alone, its regions' arguments included but not their ops. */
    private static boolean hasOwnEffect(Op op) {
        return !(op.effect() instanceof Effect.Pure)
                || op.operands().stream().anyMatch(Effects::isToken) || op.results().stream().anyMatch(Effects::isToken)
                || op.regions().stream().anyMatch(r -> r.arguments().stream().anyMatch(Effects::isToken));
    }

    /** True for block terminators ({@code func.return}, {@code stablehlo.return}). */
    public static boolean isTerminator(Op op) {
        return op.name().equals(StableHlo.RETURN) || op.name().equals(StableHlo.FUNC_RETURN);
    }

    private static boolean isToken(Value v) {
        return v.type() instanceof TokenType;
    }
}
