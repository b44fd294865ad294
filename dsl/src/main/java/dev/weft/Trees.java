package dev.weft;

import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BinaryOperator;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Trees of tensors (JAX's pytrees): a {@link Tensor} is a leaf; a {@code List}, a {@code Map<String, ?>} (in its
 * iteration order), an array and a record are nodes whose elements or components are trees; a record's component
 * may also be a constant (a primitive, boxed primitive, {@code String} or enum), part of the tree's structure. Every
 * transform and {@code @Compile} method that takes a tensor takes a tree, flattened to its leaves in this order and
 * rebuilt with the same structure: lists as unmodifiable lists, maps as insertion-ordered maps, arrays of the same
 * component type, records through their canonical constructor.
 *
 * <p>A {@code null} leaf, a cycle, or a value that is neither a tree nor (in a record) a constant is a
 * {@link ShapeException} naming the caller's line and the path to the bad value ({@code params.layers[2].w}).
 */
public final class Trees {
    private static final int MAX_DEPTH = 256;
    private static final Set<Class<?>> CONSTANTS = Set.of(Boolean.class, Byte.class, Short.class, Character.class,
            Integer.class, Long.class, Float.class, Double.class, String.class);

    private Trees() {
    }

    /** A tree's shape without its leaves: equal for trees that differ only in their tensors' values. */
    public sealed interface Structure {
        /** The number of leaves. */
        int leaves();

        /** A tree of this structure with {@code leaves}, in flattening order. */
        default Object rebuild(List<Tensor> leaves) {
            if (leaves.size() != leaves()) {
                throw new IllegalArgumentException(leaves.size() + " leaves for a structure of " + leaves());
            }
            int[] next = {0};
            return build(this, leaves, next);
        }
    }

    record Leaf() implements Structure {
        @Override
        public int leaves() {
            return 1;
        }
    }

    record Constant(Object value) implements Structure {
        @Override
        public int leaves() {
            return 0;
        }
    }

    record ListNode(List<Structure> elements) implements Structure {
        @Override
        public int leaves() {
            return elements.stream().mapToInt(Structure::leaves).sum();
        }
    }

    record MapNode(List<String> keys, List<Structure> values) implements Structure {
        @Override
        public int leaves() {
            return values.stream().mapToInt(Structure::leaves).sum();
        }
    }

    record ArrayNode(Class<?> component, List<Structure> elements) implements Structure {
        @Override
        public int leaves() {
            return elements.stream().mapToInt(Structure::leaves).sum();
        }
    }

    record RecordNode(Class<?> type, List<Structure> components) implements Structure {
        @Override
        public int leaves() {
            return components.stream().mapToInt(Structure::leaves).sum();
        }
    }

    /** Whether {@code value} is a tree of at least one node or leaf (a tensor, list, map, array or record). */
    public static boolean isTree(Object value) {
        return value instanceof Tensor || value instanceof List<?> || value instanceof Map<?, ?>
                || value != null && value.getClass().isArray() && !value.getClass().getComponentType().isPrimitive()
                || value instanceof Record;
    }

    /** The leaves of {@code tree}, in order. */
    public static List<Tensor> leaves(Object tree) {
        List<Tensor> out = new ArrayList<>();
        structure(tree, out, "tree");
        return out;
    }

    /**
     * The structure of {@code tree}; its leaves are added to {@code leaves} in order (none, for a bad tree: the
     * {@link ShapeException} leaves the list as it was).
     */
    public static Structure structure(Object tree, List<Tensor> leaves, String name) {
        return structure(tree, leaves, name, null);
    }

    /**
     * {@link #structure(Object, List, String)} with a bad tree reported at {@code where} ({@code null}: the caller's
     * line), for a caller that knows the user's line better (a {@code @Compile} method's call site).
     */
    public static Structure structure(Object tree, List<Tensor> leaves, String name, SourceLocation where) {
        return structure(tree, leaves, () -> name, () -> where);
    }

    /**
     * {@link #structure(Object, List, String, SourceLocation)} with the name and the line computed only for a bad
     * tree: for a caller on a hot path ({@code @Compile} calls flatten their tree arguments at every call).
     */
    public static Structure structure(Object tree, List<Tensor> leaves, Supplier<String> name,
                                      Supplier<SourceLocation> where) {
        int before = leaves.size();
        try {
            // without the paths that only a bad tree's message needs
            return walk(tree, leaves, null, Collections.newSetFromMap(new IdentityHashMap<>()), 0);
        } catch (BadTree unnamed) {
            leaves.subList(before, leaves.size()).clear();
            try {
                // a tree that changed between the walks (an accessor that failed once) is what this walk finds
                return walk(tree, leaves, name.get(), Collections.newSetFromMap(new IdentityHashMap<>()), 0);
            } catch (BadTree e) {
                leaves.subList(before, leaves.size()).clear();
                SourceLocation at = where.get();
                throw new ShapeException(at != null ? at : SourceLocation.capture(), e.getMessage());
            }
        }
    }

    /** What a walk without paths throws at a bad tree: the walk is done again with them, for the message. */
    private static final BadTree UNNAMED = new BadTree("a bad tree");

    /** A bad tree, located by the public entry point that met it. */
    private static final class BadTree extends RuntimeException {
        BadTree(String message) {
            super(message, null, false, false);
        }
    }

    /** A tree of {@code like}'s structure with {@code leaves}, in flattening order. */
    @SuppressWarnings("unchecked")
    public static <T> T rebuild(T like, List<Tensor> leaves) {
        Args.notNull(leaves, Trees.class, "rebuild", "leaves");
        Structure s = structure(like, new ArrayList<>(), "like");
        if (leaves.size() != s.leaves()) {
            throw new ShapeException(SourceLocation.capture(), "Trees.rebuild: " + leaves.size() + " leaves for "
                    + describe(s) + ", which has " + s.leaves());
        }
        return (T) s.rebuild(leaves);
    }

    /** {@code tree} with each leaf replaced by {@code f} of it. */
    @SuppressWarnings("unchecked")
    public static <T> T map(T tree, UnaryOperator<Tensor> f) {
        Args.notNull(f, Trees.class, "map", "f");
        List<Tensor> leaves = new ArrayList<>();
        Structure s = structure(tree, leaves, "tree");
        return (T) s.rebuild(leaves.stream().map(f).toList());
    }

    /** {@code a} with each leaf replaced by {@code f} of it and {@code b}'s leaf at the same place. */
    @SuppressWarnings("unchecked")
    public static <T> T zip(T a, T b, BinaryOperator<Tensor> f) {
        Args.notNull(f, Trees.class, "zip", "f");
        List<Tensor> la = new ArrayList<>(), lb = new ArrayList<>();
        Structure sa = structure(a, la, "a"), sb = structure(b, lb, "b");
        if (!sa.equals(sb)) {
            throw new ShapeException(SourceLocation.capture(), "Trees.zip: the trees differ in structure: "
                    + describe(sa) + " and " + describe(sb));
        }
        List<Tensor> out = new ArrayList<>(la.size());
        for (int i = 0; i < la.size(); i++) {
            out.add(f.apply(la.get(i), lb.get(i)));
        }
        return (T) sa.rebuild(out);
    }

    /** A short description of {@code s} for messages: its node types and leaf count. */
    public static String describe(Structure s) {
        return switch (s) {
            case Leaf l -> "Tensor";
            case Constant c -> String.valueOf(c.value());
            case ListNode l -> "List" + l.elements().stream().map(Trees::describe).toList();
            case MapNode m -> {
                StringBuilder b = new StringBuilder("Map{");
                for (int i = 0; i < m.keys().size(); i++) {
                    b.append(i == 0 ? "" : ", ").append(m.keys().get(i)).append('=').append(describe(m.values()
                            .get(i)));
                }
                yield b.append('}').toString();
            }
            case ArrayNode a -> a.component().getSimpleName() + a.elements().stream().map(Trees::describe).toList();
            case RecordNode r -> r.type().getSimpleName() + r.components().stream().map(Trees::describe).toList();
        };
    }

    private static Structure walk(Object v, List<Tensor> leaves, String path, Set<Object> onPath, int depth) {
        if (depth > MAX_DEPTH) {
            throw bad(path, "nests deeper than " + MAX_DEPTH + " levels");
        }
        if (v == null) {
            throw bad(path, "is null; a tree's leaves are tensors");
        }
        if (v instanceof Tensor t) {
            leaves.add(t);
            return new Leaf();
        }
        if (!(v instanceof Record) && !(v instanceof List<?>) && !(v instanceof Map<?, ?>) && !v.getClass().isArray()) {
            throw bad(path, "is a " + v.getClass().getName() + ", neither a tensor nor a list, map, array or record"
                    + " of them");
        }
        if (!onPath.add(v)) {
            throw bad(path, "contains itself (a cycle)");
        }
        try {
            if (v instanceof List<?> list) {
                List<Structure> out = new ArrayList<>(list.size());
                for (int i = 0; i < list.size(); i++) {
                    out.add(walk(list.get(i), leaves, path == null ? null : path + "[" + i + "]", onPath, depth + 1));
                }
                return new ListNode(List.copyOf(out));
            }
            if (v instanceof Map<?, ?> map) {
                List<String> keys = new ArrayList<>(map.size());
                List<Structure> out = new ArrayList<>(map.size());
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (!(e.getKey() instanceof String k)) {
                        throw bad(path, "has the key " + e.getKey() + "; a tree's map keys are strings");
                    }
                    keys.add(k);
                    out.add(walk(e.getValue(), leaves, path == null ? null : path + "." + k, onPath, depth + 1));
                }
                return new MapNode(List.copyOf(keys), List.copyOf(out));
            }
            if (v.getClass().isArray()) {
                Class<?> component = v.getClass().getComponentType();
                if (component.isPrimitive()) {
                    throw bad(path, "is a " + component + "[]; make it a tensor (Tensor.of)");
                }
                int n = Array.getLength(v);
                List<Structure> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(walk(Array.get(v, i), leaves, path == null ? null : path + "[" + i + "]", onPath,
                            depth + 1));
                }
                return new ArrayNode(component, List.copyOf(out));
            }
            RecordType type = RECORDS.get(v.getClass());
            List<Structure> out = new ArrayList<>(type.names().length);
            for (int i = 0; i < type.names().length; i++) {
                Object value = type.read(i, v, path);
                String at = path == null ? null : path + "." + type.names()[i];
                out.add(value != null && (CONSTANTS.contains(value.getClass()) || value instanceof Enum<?>)
                        ? new Constant(value) : walk(value, leaves, at, onPath, depth + 1));
            }
            return new RecordNode(v.getClass(), List.copyOf(out));
        } finally {
            onPath.remove(v);
        }
    }

    /**
     * What flattening and rebuilding a record class needs, found once per class (reflection on each call had cost a
     * {@code @Compile} call with a record argument tens of microseconds): its components' names, their accessors
     * and its canonical constructor as method handles, or why they cannot be had.
     */
    private record RecordType(Class<?> type, String[] names, MethodHandle[] accessors, MethodHandle constructor,
                              RuntimeException inaccessible) {
        static RecordType of(Class<?> type) {
            RecordComponent[] rc = type.getRecordComponents();
            String[] names = Arrays.stream(rc).map(RecordComponent::getName).toArray(String[]::new);
            MethodHandle[] accessors = new MethodHandle[rc.length];
            MethodHandle constructor = null;
            RuntimeException inaccessible = null;
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                for (int i = 0; i < rc.length; i++) {
                    Method m = rc[i].getAccessor();
                    m.setAccessible(true);
                    accessors[i] = lookup.unreflect(m).asType(MethodType.methodType(Object.class, Object.class));
                }
                Constructor<?> c = type.getDeclaredConstructor(
                        Arrays.stream(rc).map(RecordComponent::getType).toArray(Class<?>[]::new));
                c.setAccessible(true);
                constructor = lookup.unreflectConstructor(c).asSpreader(Object[].class, rc.length)
                        .asType(MethodType.methodType(Object.class, Object[].class));
            } catch (IllegalAccessException | NoSuchMethodException e) {
                inaccessible = new IllegalStateException(e.toString(), e);
            } catch (RuntimeException e) {
                inaccessible = e;
            }
            return new RecordType(type, names, accessors, constructor, inaccessible);
        }

        /** Component {@code i} of {@code record}, which is at {@code path} (null: not kept) in its tree. */
        Object read(int i, Object record, String path) {
            if (accessors[i] == null) {
                throw bad(path, "cannot be read (" + inaccessible + "); make the record accessible to Weft");
            }
            try {
                return accessors[i].invokeExact(record);
            } catch (Throwable e) {
                throw bad(path == null ? null : path + "." + names[i], "threw " + e);
            }
        }

        /** A record of this class from its components' values. */
        Object construct(Object[] args) {
            if (constructor == null) {
                throw new ShapeException(SourceLocation.capture(), "rebuilding a " + type.getSimpleName() + ": "
                        + inaccessible);
            }
            try {
                return constructor.invokeExact(args);
            } catch (Throwable e) {
                throw new ShapeException(SourceLocation.capture(), "rebuilding a " + type.getSimpleName() + ": its"
                        + " constructor threw " + e);
            }
        }
    }

    private static final ClassValue<RecordType> RECORDS = new ClassValue<>() {
        @Override
        protected RecordType computeValue(Class<?> type) {
            return RecordType.of(type);
        }
    };

    private static Object build(Structure s, List<Tensor> leaves, int[] next) {
        return switch (s) {
            case Leaf l -> leaves.get(next[0]++);
            case Constant c -> c.value();
            case ListNode l -> {
                List<Object> out = new ArrayList<>(l.elements().size());
                for (Structure e : l.elements()) {
                    out.add(build(e, leaves, next));
                }
                yield Collections.unmodifiableList(out);
            }
            case MapNode m -> {
                Map<String, Object> out = new LinkedHashMap<>();
                for (int i = 0; i < m.keys().size(); i++) {
                    out.put(m.keys().get(i), build(m.values().get(i), leaves, next));
                }
                yield Collections.unmodifiableMap(out);
            }
            case ArrayNode a -> {
                Object out = Array.newInstance(a.component(), a.elements().size());
                for (int i = 0; i < a.elements().size(); i++) {
                    Array.set(out, i, build(a.elements().get(i), leaves, next));
                }
                yield out;
            }
            case RecordNode r -> {
                Object[] args = new Object[r.components().size()];
                for (int i = 0; i < args.length; i++) {
                    args[i] = build(r.components().get(i), leaves, next);
                }
                yield RECORDS.get(r.type()).construct(args);
            }
        };
    }

    /** A bad tree at {@code path}; without a path (a first walk that keeps none), one that only says so. */
    private static BadTree bad(String path, String what) {
        return path == null ? UNNAMED : new BadTree(path + " " + what);
    }
}
