package dev.weft.prim.reference;

import dev.weft.prim.CommPrims;
import dev.weft.prim.Prims;
import dev.weft.spi.Primitive;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/** The primitives that coverage tests go through: every public constant of {@link Prims} and {@link CommPrims}. */
public final class AllPrimitives {
    private AllPrimitives() {
    }

    /** Every array primitive ({@link Prims}). */
    public static List<Primitive<?>> array() {
        return constants(Prims.class);
    }

    /** Every primitive, array and communication. */
    public static List<Primitive<?>> all() {
        List<Primitive<?>> all = new ArrayList<>(array());
        all.addAll(constants(CommPrims.class));
        return all;
    }

    private static List<Primitive<?>> constants(Class<?> holder) {
        List<Primitive<?>> out = new ArrayList<>();
        for (Field f : holder.getFields()) {
            try {
                if (Modifier.isStatic(f.getModifiers()) && f.get(null) instanceof Primitive<?> p) {
                    out.add(p);
                }
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }
}
