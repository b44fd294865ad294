package dev.weft.spi;

import dev.weft.WeftException;
import java.util.List;
import java.util.function.Function;

/**
 * One operation of the graph IR: its name, effect rule and shape rule. Lowering rules (per target) and eager
 * implementations are registered elsewhere, keyed by the primitive's identity, so new primitives need no
 * edits to a central switch.
 *
 * @param <P> the parameter type of its applications
 */
public final class Primitive<P extends Params> {
    private final String name;
    private final Class<P> paramsType;
    private final Function<P, Effect> effect;
    private final ShapeRule<P> rule;

    /** A pure primitive. */
    public Primitive(String name, Class<P> paramsType, ShapeRule<P> rule) {
        this(name, paramsType, p -> Effect.PURE, rule);
    }

    /** A primitive whose applications have the effect {@code effect} gives for their parameters. */
    public Primitive(String name, Class<P> paramsType, Function<P, Effect> effect, ShapeRule<P> rule) {
        this.name = name;
        this.paramsType = paramsType;
        this.effect = effect;
        this.rule = rule;
    }

    public String name() {
        return name;
    }

    /** The effect of an application with {@code params}. */
    public Effect effect(Params params) {
        return effect.apply(paramsType.cast(params));
    }

    public Class<P> paramsType() {
        return paramsType;
    }

    /** Output avals; a shape or dtype error is re-raised with {@code where} as its location. */
    public List<Aval> infer(List<Aval> inputs, Params params, SourceLocation where) {
        try {
            return rule.infer(inputs, paramsType.cast(params));
        } catch (WeftException e) {
            if (!e.location().isUnknown() || where == null || where.isUnknown()) {
                throw e;
            }
            throw Errors.relocate(e, where);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
