package dev.weft.lowering.ir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IrWalkTest {
    private static final TensorType T = TensorType.of(DType.F32, 4);

    /** An op named {@code name} with {@code regions}, appended to {@code block}. */
    private static Op op(Block block, String name, Block... regions) {
        Op op = new Op(name, List.of(), List.of(T), Map.of(), List.of(regions), null);
        block.ops().add(op);
        return op;
    }

    /**
     * {@code @main}: a, loop{cond: c1; body: b1, branch{t1; f1}, b2}, z; {@code @other}: o. Pre-order visits an op
     * before its regions, regions in order, and the functions in order.
     */
    private static Module module() {
        Block cond = Block.withArgs(List.of());
        op(cond, "c1");
        Block onTrue = Block.withArgs(List.of());
        op(onTrue, "t1");
        Block onFalse = Block.withArgs(List.of());
        op(onFalse, "f1");
        Block body = Block.withArgs(List.of());
        op(body, "b1");
        op(body, "branch", onTrue, onFalse);
        op(body, "b2");
        Block main = Block.withArgs(List.of());
        op(main, "a");
        op(main, "loop", cond, body);
        op(main, "z");
        Block other = Block.withArgs(List.of());
        op(other, "o");
        return new Module(null, List.of(new Func("main", main), new Func("other", other)));
    }

    @Test
    void visitsAnOpBeforeItsRegionsAndTheFunctionsInOrder() {
        Module m = module();
        List<String> visited = new ArrayList<>();
        IrWalk.forEachOp(m, op -> visited.add(op.name()));
        assertThat(visited).containsExactly("a", "loop", "c1", "b1", "branch", "t1", "f1", "b2", "z", "o");
        assertThat(IrWalk.ops(m).map(Op::name)).containsExactlyElementsOf(visited);
    }

    @Test
    void aBlockOrAnOpIsWalkedWithoutItsSurroundings() {
        Module m = module();
        Op loop = m.main().body().ops().get(1);
        List<String> fromOp = new ArrayList<>();
        IrWalk.forEachOp(loop, op -> fromOp.add(op.name()));
        assertThat(fromOp).containsExactly("loop", "c1", "b1", "branch", "t1", "f1", "b2");
        assertThat(IrWalk.ops(loop).map(Op::name)).containsExactlyElementsOf(fromOp);
        List<String> fromBlock = new ArrayList<>();
        IrWalk.forEachOp(loop.regions().get(1), op -> fromBlock.add(op.name()));
        assertThat(fromBlock).containsExactly("b1", "branch", "t1", "f1", "b2");
        assertThat(IrWalk.ops(m.main().body()).map(Op::name)).doesNotContain("o").hasSize(9);
    }
}
