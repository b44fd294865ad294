package dev.weft.tracer;

import java.util.Set;

/** Compile-time constants: primitives (boxed by the call), {@code String} and enums; the value is the key. */
final class ConstantArgument implements ArgumentKind {
    private static final Set<Class<?>> TYPES = Set.of(Boolean.class, Byte.class, Short.class, Character.class,
            Integer.class, Long.class, Float.class, Double.class, String.class);

    @Override
    public boolean accepts(Class<?> type) {
        return TYPES.contains(type) || Enum.class.isAssignableFrom(type);
    }

    @Override
    public Object key(Object value) {
        return value;
    }

    @Override
    public String description() {
        return "compile-time constants (primitives, boxed primitives, String, enums)";
    }
}
