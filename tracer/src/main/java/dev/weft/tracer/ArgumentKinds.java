package dev.weft.tracer;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/** The argument kinds in lookup order, and the kind of each argument class (remembered per class). */
final class ArgumentKinds {
    private static final List<ArgumentKind> KINDS = load();

    private static final ClassValue<Optional<ArgumentKind>> BY_CLASS = new ClassValue<>() {
        @Override
        protected Optional<ArgumentKind> computeValue(Class<?> type) {
            return KINDS.stream().filter(k -> k.accepts(type)).findFirst();
        }
    };

    private ArgumentKinds() {
    }

    /** The kind of {@code value}, or {@code null} if no kind accepts it (or it is {@code null}). */
    static ArgumentKind of(Object value) {
        return value == null ? null : BY_CLASS.get(value.getClass()).orElse(null);
    }

    /** What a {@code @Compile} method accepts, for error messages. */
    static String accepted() {
        StringBuilder b = new StringBuilder("Tensor, trees of tensors (List, Map, array or record)");
        for (ArgumentKind k : KINDS) {
            b.append(", ").append(k.description());
        }
        return b.toString();
    }

    private static List<ArgumentKind> load() {
        List<ArgumentKind> kinds = new ArrayList<>();
        kinds.add(new ConstantArgument());
        kinds.add(new ShardingArgument());
        ServiceLoader.load(ArgumentKind.class, ArgumentKind.class.getClassLoader()).forEach(kinds::add);
        return List.copyOf(kinds);
    }
}
