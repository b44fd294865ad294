package dev.weft.lowering.ir;

import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.Effect;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One operation of the lowered module, in MLIR's generic shape: a name ({@code stablehlo.add}), operands,
 * results, attributes, regions (each a single {@link Block}) and the user's source location, and its own
 * {@link Effect} (that of the traced application it lowers; nested ops' effects are their own). Compared by
 * identity. Operands, attributes and regions may be replaced by passes; results and effect are fixed at creation.
 */
public final class Op {
    private final String name;
    private final List<Value> operands;
    private final List<Value> results;
    private final Map<String, Attr> attributes;
    private final List<Block> regions;
    private final SourceLocation location;
    private final Effect effect;

    /** A pure op. */
    public Op(String name, List<Value> operands, List<Type> resultTypes, Map<String, Attr> attributes,
              List<Block> regions, SourceLocation location) {
        this(name, operands, resultTypes, attributes, regions, location, Effect.PURE);
    }

    public Op(String name, List<Value> operands, List<Type> resultTypes, Map<String, Attr> attributes,
              List<Block> regions, SourceLocation location, Effect effect) {
        this.effect = effect;
        this.name = name;
        this.operands = new ArrayList<>(operands);
        this.results = resultTypes.stream().map(Value::new).toList();
        this.attributes = new LinkedHashMap<>(attributes);
        this.regions = new ArrayList<>(regions);
        this.location = location == null ? SourceLocation.UNKNOWN : location;
    }

    public String name() {
        return name;
    }

    /** The elementwise op this op computes, from its name and comparison direction, or null if it is not one. */
    public ElementwiseOp elementwise() {
        return ElementwiseOp.lowered(name,
                attributes.get(StableHlo.COMPARISON_DIRECTION) instanceof Attr.Enum e ? e.value() : null);
    }

    /** The operand list, which passes may edit in place. */
    public List<Value> operands() {
        return operands;
    }

    public Value operand(int i) {
        return operands.get(i);
    }

    public List<Value> results() {
        return results;
    }

    public Value result() {
        if (results.size() != 1) {
            throw new IllegalStateException(name + " has " + results.size() + " results");
        }
        return results.getFirst();
    }

    /** The attribute map (insertion-ordered), which passes may edit in place. */
    public Map<String, Attr> attributes() {
        return attributes;
    }

    public Attr attr(String key) {
        return attributes.get(key);
    }

    /** The {@link Attr.I64Array} attribute {@code key} as an array; an op without it is an internal error. */
    public long[] longs(String key) {
        if (attributes.get(key) instanceof Attr.I64Array a) {
            return a.toArray();
        }
        throw new IllegalArgumentException(name + " has no integer array attribute " + key);
    }

    /** The regions, which passes may edit in place. */
    public List<Block> regions() {
        return regions;
    }

    /** Adds to {@code into} the values this op reads: its operands and those of the ops in its regions. */
    public void collectUses(Set<Value> into) {
        IrWalk.forEachOp(this, op -> into.addAll(op.operands));
    }

    public SourceLocation location() {
        return location;
    }

    public Effect effect() {
        return effect;
    }

    /** Replaces every use of {@code from} among the operands by {@code to}. */
    public void replaceOperand(Value from, Value to) {
        operands.replaceAll(v -> v == from ? to : v);
    }

    @Override
    public String toString() {
        return name + " @ " + location;
    }
}
