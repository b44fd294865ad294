package dev.weft.lowering.passes;

import static dev.weft.lowering.passes.ModuleBuilder.F4;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.Effect;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code thread-tokens} chains the ops by their effects: one chain per communicator, pure ops left alone. */
class ThreadTokensTest {
    @Test
    void oneChainPerCommunicatorInProgramOrder() {
        ModuleBuilder b = new ModuleBuilder(F4);
        ModuleBuilder.Comm other = new ModuleBuilder.Comm("world");
        Value x = b.arg(0);
        Value a1 = b.custom(x, new Effect.Ordered(ModuleBuilder.WORLD)).result();
        Value b1 = b.custom(a1, new Effect.Ordered(other)).result();
        Value a2 = b.custom(b1, new Effect.Ordered(ModuleBuilder.WORLD)).result();
        Value pure = b.custom(a2, Effect.PURE).result();
        Module m = b.module(pure);

        new ThreadTokens().run(m);

        List<Op> ops = m.main().body().ops();
        assertThat(ops.subList(0, 2)).allMatch(op -> op.name().equals(StableHlo.AFTER_ALL));
        Op first = ops.get(2), second = ops.get(3), third = ops.get(4), fourth = ops.get(5);
        assertThat(first.operands().getLast()).isSameAs(ops.get(0).result());
        assertThat(second.operands().getLast()).as("a communicator of the same name is another chain")
                .isSameAs(ops.get(1).result());
        assertThat(third.operands().getLast()).isSameAs(first.results().getLast());
        assertThat(third.effect()).isEqualTo(new Effect.Ordered(ModuleBuilder.WORLD));
        assertThat(fourth.operands()).as("has_side_effect alone orders nothing").noneMatch(
                v -> v.type() instanceof TokenType);
        assertThat(fourth.results()).hasSize(1);
    }
}
