package dev.weft.lowering.passes;

import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.IrWalk;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TokenType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.spi.Effect;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Threads one {@code !stablehlo.token} chain per communicator through the side-effecting custom calls, in
 * program order: each such call takes its communicator's current token and yields the next one. Loops carry the
 * tokens of the communicators used in their bodies; branches return them. The chain makes the order of effects
 * data dependence, so no later pass can drop, merge or reorder them. The ops threaded are those whose effect is
 * {@link Effect.Ordered}, one chain per communicator it names; each chain starts at a {@code stablehlo.after_all}
 * at the top of the function.
 */
public final class ThreadTokens implements Pass {
    @Override
    public String name() {
        return "thread-tokens";
    }

    @Override
    public void run(Module m) {
        for (Func f : m.functions()) {
            Set<Effect.Ordered> comms = commsIn(f.body());
            if (comms.isEmpty()) {
                continue;
            }
            Map<Effect.Ordered, Value> tokens = new LinkedHashMap<>();
            List<Op> starts = new ArrayList<>();
            for (Effect.Ordered c : comms) {
                Op start = new Op(StableHlo.AFTER_ALL, List.of(), List.of(TokenType.INSTANCE), Map.of(), List.of(), null);
                starts.add(start);
                tokens.put(c, start.result());
            }
            thread(f.body(), tokens, f.body());
            f.body().ops().addAll(0, starts);
        }
    }

    /** Rewrites {@code block} in place; {@code tokens} holds each communicator's current token, and is updated. */
    private static void thread(Block block, Map<Effect.Ordered, Value> tokens, Block function) {
        List<Op> ops = block.ops();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            Op replacement = null;
            if (op.effect() instanceof Effect.Ordered c) {
                List<Value> operands = new ArrayList<>(op.operands());
                operands.add(tokens.get(c));
                replacement = rebuild(op, operands, op.regions());
                tokens.put(c, replacement.results().getLast());
            } else if (op.name().equals(StableHlo.WHILE)) {
                replacement = threadWhile(op, tokens, function);
            } else if (op.name().equals(StableHlo.IF)) {
                replacement = threadIf(op, tokens, function);
            }
            if (replacement != null) {
                ops.set(i, replacement);
                for (int r = 0; r < op.results().size(); r++) {
                    replaceUses(function, op.results().get(r), replacement.results().get(r));
                }
            }
        }
    }

    private static Op threadWhile(Op op, Map<Effect.Ordered, Value> tokens, Block function) {
        List<Effect.Ordered> used = List.copyOf(commsIn(op.regions().get(1)));
        if (used.isEmpty()) {
            return null;
        }
        List<Value> operands = new ArrayList<>(op.operands());
        used.forEach(c -> operands.add(tokens.get(c)));
        Block cond = withTokenArgs(op.regions().get(0), used.size());
        Block body = withTokenArgs(op.regions().get(1), used.size());
        Map<Effect.Ordered, Value> inner = new LinkedHashMap<>();
        int first = body.arguments().size() - used.size();
        for (int k = 0; k < used.size(); k++) {
            inner.put(used.get(k), body.arguments().get(first + k));
        }
        thread(body, inner, function);
        used.forEach(c -> body.terminator().operands().add(inner.get(c)));
        Op replacement = rebuild(op, operands, List.of(cond, body), used.size());
        int base = op.results().size();
        for (int k = 0; k < used.size(); k++) {
            tokens.put(used.get(k), replacement.results().get(base + k));
        }
        return replacement;
    }

    private static Op threadIf(Op op, Map<Effect.Ordered, Value> tokens, Block function) {
        Set<Effect.Ordered> usedSet = new LinkedHashSet<>();
        op.regions().forEach(r -> usedSet.addAll(commsIn(r)));
        List<Effect.Ordered> used = List.copyOf(usedSet);
        if (used.isEmpty()) {
            return null;
        }
        for (Block branch : op.regions()) {
            Map<Effect.Ordered, Value> inner = new LinkedHashMap<>(tokens);
            thread(branch, inner, function);
            used.forEach(c -> branch.terminator().operands().add(inner.get(c)));
        }
        Op replacement = rebuild(op, op.operands(), op.regions(), used.size());
        int base = op.results().size();
        for (int k = 0; k < used.size(); k++) {
            tokens.put(used.get(k), replacement.results().get(base + k));
        }
        return replacement;
    }

    /** The same block with {@code n} token arguments appended (the old arguments keep their identity). */
    private static Block withTokenArgs(Block b, int n) {
        List<Value> args = new ArrayList<>(b.arguments());
        for (int k = 0; k < n; k++) {
            args.add(new Value(TokenType.INSTANCE));
        }
        return new Block(args, b.ops());
    }

    private static Op rebuild(Op op, List<Value> operands, List<Block> regions) {
        return rebuild(op, operands, regions, 1);
    }

    private static Op rebuild(Op op, List<Value> operands, List<Block> regions, int extraTokens) {
        List<Type> types = new ArrayList<>(op.results().stream().map(Value::type).toList());
        for (int k = 0; k < extraTokens; k++) {
            types.add(TokenType.INSTANCE);
        }
        return new Op(op.name(), operands, types, op.attributes(), regions, op.location(), op.effect());
    }

    private static void replaceUses(Block block, Value from, Value to) {
        IrWalk.forEachOp(block, op -> op.replaceOperand(from, to));
    }

    /** The orderings of the ops in {@code block} and its nested regions, in order of first use. */
    private static Set<Effect.Ordered> commsIn(Block block) {
        Set<Effect.Ordered> out = new LinkedHashSet<>();
        IrWalk.forEachOp(block, op -> {
            if (op.effect() instanceof Effect.Ordered c) {
                out.add(c);
            }
        });
        return out;
    }
}
