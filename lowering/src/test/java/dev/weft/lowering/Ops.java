package dev.weft.lowering;

import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import java.util.List;

/** Test helpers to look at lowered modules. */
public final class Ops {
    private Ops() {
    }

    public static List<String> names(Block b) {
        return b.ops().stream().map(Op::name).toList();
    }

    public static List<String> names(Module m) {
        return names(m.main().body());
    }

    /** The single op named {@code name} in the block. */
    public static Op only(Block b, String name) {
        List<Op> ops = b.ops().stream().filter(o -> o.name().equals(name)).toList();
        if (ops.size() != 1) {
            throw new AssertionError("expected one " + name + " in " + names(b));
        }
        return ops.getFirst();
    }
}
