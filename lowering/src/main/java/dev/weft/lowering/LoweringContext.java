package dev.weft.lowering;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.lowering.ir.Attr;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Type;
import dev.weft.lowering.ir.Value;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.Effect;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a {@link LoweringRule} sees: the target, an insertion point (the end of the current block) and the source
 * location and effect of the node being lowered, which every op emitted for it carries (the ops of its nested
 * regions carry their own nodes'), naming its communicator by reference ({@link Effect#symbolic}).
 */
public final class LoweringContext {
    private final LoweringRules rules;
    private final Target target;
    private final Module module;
    private Block block;
    private SourceLocation location = SourceLocation.UNKNOWN;
    private Effect effect = Effect.PURE;

    LoweringContext(LoweringRules rules, Target target, Module module, Block block) {
        this.rules = rules;
        this.target = target;
        this.module = module;
        this.block = block;
    }

    /** The rules this lowering uses (to lower sub-computations such as custom reductions). */
    public LoweringRules rules() {
        return rules;
    }

    /** Adds a function (a called computation) to the module unless one of that name exists; returns its name. */
    public String addFunction(Func f) {
        if (module.functions().stream().noneMatch(g -> g.name().equals(f.name()))) {
            module.functions().add(f);
        }
        return f.name();
    }

    /** The target being lowered for. */
    public Target target() {
        return target;
    }

    /** The source location of the node being lowered. */
    public SourceLocation location() {
        return location;
    }

    /** Appends an op to the current block with the current node's location and effect, and returns it. */
    public Op emit(String name, List<Value> operands, List<? extends Type> resultTypes, Map<String, Attr> attrs,
                   List<Block> regions) {
        Op op = new Op(name, operands, List.copyOf(resultTypes), attrs, regions, location, effect);
        block.ops().add(op);
        return op;
    }

    /** Appends a single-result, region-free op and returns its result. */
    public Value emit(String name, List<Value> operands, Type resultType, Map<String, Attr> attrs) {
        return emit(name, operands, List.of(resultType), attrs, List.of()).result();
    }

    /** Appends elementwise op {@code op} (with its comparison direction, if any) and returns it. */
    public Op emit(ElementwiseOp op, List<Value> operands, List<? extends Type> resultTypes) {
        Map<String, Attr> attrs = op.direction() == null ? Map.of() : Map.of(StableHlo.COMPARISON_DIRECTION,
                new Attr.Enum("stablehlo", StableHlo.COMPARISON_DIRECTION, op.direction()));
        return emit(op.mlirName(), operands, resultTypes, attrs, List.of());
    }

    /** A {@code stablehlo.constant} of the given type and row-major contents (not copied). */
    public Value constant(TensorType type, MemorySegment data) {
        return emit(StableHlo.CONSTANT, List.of(), type, Map.of("value", new Attr.Dense(type, data)));
    }

    /** A rank-0 constant of {@code dtype} holding {@code value} (converted as a Java cast would; BOOL: != 0). */
    public Value scalar(DType dtype, double value) {
        MemorySegment data = Arena.ofAuto().allocate(dtype.byteSize());
        switch (dtype) {
            case F32 -> data.set(ValueLayout.JAVA_FLOAT, 0, (float) value);
            case F64 -> data.set(ValueLayout.JAVA_DOUBLE, 0, value);
            case I32 -> data.set(ValueLayout.JAVA_INT, 0, (int) value);
            case I64 -> data.set(ValueLayout.JAVA_LONG, 0, (long) value);
            case BOOL -> data.set(ValueLayout.JAVA_BYTE, 0, (byte) (value != 0 ? 1 : 0));
        }
        return constant(TensorType.of(dtype), data);
    }

    /** A rank-0 integer constant, exact for every {@code long}; floating dtypes round. */
    public Value scalar(DType dtype, long value) {
        if (dtype != DType.I64) {
            return scalar(dtype, (double) value);
        }
        MemorySegment data = Arena.ofAuto().allocate(dtype.byteSize());
        data.set(ValueLayout.JAVA_LONG, 0, value);
        return constant(TensorType.of(dtype), data);
    }

    /**
     * A new block with arguments of {@code argTypes}: {@code body} receives the arguments, emits into the block
     * (the insertion point moves there meanwhile) and returns the values that {@code stablehlo.return} yields.
     */
    public Block block(List<? extends Type> argTypes, Function<List<Value>, List<Value>> body) {
        Block b = Block.withArgs(argTypes);
        Block outer = block;
        block = b;
        try {
            List<Value> results = body.apply(b.arguments());
            emit(StableHlo.RETURN, results, List.of(), Map.of(), List.of());
        } finally {
            block = outer;
        }
        return b;
    }

    /**
     * Lowers the nodes of a graph region at the insertion point, with its parameters bound to {@code params}
     * (block arguments, or outer values for regions that capture implicitly), and returns the values of its
     * results.
     */
    public List<Value> lowerRegion(Region region, List<Value> params) {
        if (params.size() != region.params().size()) {
            throw new WeftException(location, "region takes " + region.params().size() + " parameters, given "
                    + params.size());
        }
        Map<Var, Value> env = new IdentityHashMap<>();
        for (int i = 0; i < params.size(); i++) {
            env.put(region.params().get(i), params.get(i));
        }
        SourceLocation outer = location;
        Effect outerEffect = effect;
        try {
            for (Node node : region.nodes()) {
                lowerNode(node, env);
            }
        } finally {
            location = outer;
            effect = outerEffect;
        }
        return region.results().stream().map(v -> lookup(env, v)).toList();
    }

    private void lowerNode(Node node, Map<Var, Value> env) {
        location = node.location();
        effect = node.prim().effect(node.params()).symbolic();
        List<Value> operands = node.inputs().stream().map(v -> lookup(env, v)).toList();
        LoweringRule rule = rules.lookup(node.prim(), target, node.location());
        List<Value> outs = rule.lower(this, node, operands);
        if (outs.size() != node.outputs().size()) {
            throw new WeftException(node.location(), "lowering of " + node.prim().name() + " produced "
                    + outs.size() + " values for " + node.outputs().size() + " outputs");
        }
        for (int i = 0; i < outs.size(); i++) {
            Var out = node.outputs().get(i);
            if (!outs.get(i).type().equals(TensorType.of(out.aval()))) {
                throw new WeftException(node.location(), "lowering of " + node.prim().name() + " produced "
                        + outs.get(i).type().mlir() + " for output " + out + " of type " + out.aval());
            }
            env.put(out, outs.get(i));
        }
    }

    private Value lookup(Map<Var, Value> env, Var v) {
        Value value = env.get(v);
        if (value == null) {
            throw new WeftException(location, "graph value " + v + " is used outside the region that defines it");
        }
        return value;
    }

    /** The lowered types of a node's outputs. */
    public static List<Type> outputTypes(Node node) {
        return node.outputs().stream().map(v -> (Type) TensorType.of(v.aval())).toList();
    }
}
