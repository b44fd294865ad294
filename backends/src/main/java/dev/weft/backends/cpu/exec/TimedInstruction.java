package dev.weft.backends.cpu.exec;

import dev.weft.backends.timeline.EventSite;
import dev.weft.backends.timeline.JsonObjectText;
import dev.weft.backends.timeline.Timeline;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An instruction that records each run as a {@code kernel} event of the {@link Timeline}. The builder wraps
 * instructions so only while a timeline is recorded, so that without one the executor runs exactly as before.
 */
record TimedInstruction(Instruction inner, EventSite site) implements Instruction {
    /** Fused ops named in a kernel's event, at most. */
    private static final int NAMED_OPS = 8;

    /** {@code inner}, the instruction of {@code op}, timed when a timeline is recorded and {@code op} is a kernel. */
    static Instruction of(Op op, Instruction inner) {
        return Timeline.ENABLED && isKernel(op) ? new TimedInstruction(inner, site(op)) : inner;
    }

    @Override
    public void execute(CpuFrame f) {
        long start = System.nanoTime();
        inner.execute(f);
        Timeline.record(site, start);
    }

    /**
     * Whether {@code op} computes: not a constant, a token, a custom call (communication, recorded as such) or
     * control flow (whose body's ops are recorded one by one).
     */
    private static boolean isKernel(Op op) {
        return switch (op.name()) {
            case StableHlo.CONSTANT, StableHlo.AFTER_ALL, StableHlo.CUSTOM_CALL, StableHlo.WHILE, StableHlo.IF -> false;
            default -> true;
        };
    }

    private static EventSite site(Op op) {
        String name = shortName(op.name());
        JsonObjectText args = new JsonObjectText().field("op", name);
        if (!op.regions().isEmpty()) {
            Set<String> inside = new LinkedHashSet<>();
            for (Block b : op.regions()) {
                b.ops().stream().map(o -> shortName(o.name())).filter(n -> !n.equals("return")).forEach(inside::add);
            }
            String listed = inside.stream().limit(NAMED_OPS).collect(Collectors.joining(","));
            args.field("ops", inside.size() > NAMED_OPS ? listed + ",..." : listed);
        }
        Value result = op.results().isEmpty() ? null : op.results().getFirst();
        if (result != null && result.type() instanceof TensorType t) {
            args.field("result", t.aval().toString());
        }
        return new EventSite(EventSite.KERNEL, name, args.field("line", op.location().toString()).toString());
    }

    /** {@code add} for {@code stablehlo.add}, {@code fusion} for {@code weft.fusion}. */
    private static String shortName(String opName) {
        return opName.substring(opName.indexOf('.') + 1);
    }
}
