package dev.weft.lowering.ir;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Op attributes, printed in MLIR syntax by {@link #mlir()}. */
public sealed interface Attr {
    String mlir();

    /** An integer: {@code 3 : i64}. */
    record Int(long value, String type) implements Attr {
        public static Int i64(long v) {
            return new Int(v, "i64");
        }

        public static Int i32(long v) {
            return new Int(v, "i32");
        }

        @Override
        public String mlir() {
            return value + " : " + type;
        }
    }

    /** A floating-point number: {@code 0.5 : f64}. */
    record Float(double value, String type) implements Attr {
        @Override
        public String mlir() {
            return Mlir.floatLiteral(value, type) + " : " + type;
        }
    }

    record Bool(boolean value) implements Attr {
        @Override
        public String mlir() {
            return Boolean.toString(value);
        }
    }

    record Str(String value) implements Attr {
        @Override
        public String mlir() {
            return Mlir.quote(value);
        }
    }

    /** {@code array<i64: 1, 0>}. */
    record I64Array(List<Long> values) implements Attr {
        public I64Array {
            values = List.copyOf(values);
        }

        public static I64Array of(long... v) {
            return new I64Array(Arrays.stream(v).boxed().toList());
        }

        public static I64Array of(int... v) {
            return new I64Array(Arrays.stream(v).mapToLong(i -> i).boxed().toList());
        }

        public long[] toArray() {
            return values.stream().mapToLong(Long::longValue).toArray();
        }

        @Override
        public String mlir() {
            StringBuilder b = new StringBuilder("array<i64");
            for (int i = 0; i < values.size(); i++) {
                b.append(i == 0 ? ": " : ", ").append(values.get(i));
            }
            return b.append('>').toString();
        }
    }

    /** Dense tensor contents, row-major in {@code data} (not copied; never written). */
    record Dense(TensorType type, MemorySegment data) implements Attr {
        @Override
        public String mlir() {
            return Mlir.dense(type, data);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Dense d && d.type.equals(type) && d.data.byteSize() == data.byteSize()
                    && d.data.mismatch(data) < 0;
        }

        @Override
        public int hashCode() {
            return type.hashCode();
        }
    }

    /** Text taken as is, for dialect attributes such as {@code #stablehlo<comparison_direction LT>}. */
    record Opaque(String text) implements Attr {
        @Override
        public String mlir() {
            return text;
        }
    }

    /** A dictionary, printed in insertion order. */
    record Dict(Map<String, Attr> entries) implements Attr {
        public Dict {
            entries = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(entries));
        }

        @Override
        public String mlir() {
            StringBuilder b = new StringBuilder("{");
            int i = 0;
            for (Map.Entry<String, Attr> e : entries.entrySet()) {
                b.append(i++ == 0 ? "" : ", ").append(Mlir.attrName(e.getKey())).append(" = ")
                        .append(e.getValue().mlir());
            }
            return b.append('}').toString();
        }
    }

    /** An array of attributes: {@code [@f, @g]}. */
    record Array(List<Attr> elements) implements Attr {
        public Array {
            elements = List.copyOf(elements);
        }

        @Override
        public String mlir() {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < elements.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(elements.get(i).mlir());
            }
            return b.append(']').toString();
        }
    }

    /** A reference to a function: {@code @name}. */
    record Symbol(String name) implements Attr {
        @Override
        public String mlir() {
            return "@" + name;
        }
    }

    /** A dialect enum attribute: {@code #stablehlo<comparison_direction LT>} is {@code Enum("stablehlo", "comparison_direction", "LT")}. */
    record Enum(String dialect, String kind, String value) implements Attr {
        @Override
        public String mlir() {
            return "#" + dialect + "<" + kind + " " + value + ">";
        }
    }

    /** StableHLO's {@code #stablehlo.dot<...>} dimension numbers of {@code dot_general}. */
    record DotDimensions(List<Long> lhsBatch, List<Long> rhsBatch, List<Long> lhsContracting,
                         List<Long> rhsContracting) implements Attr {
        public DotDimensions {
            lhsBatch = List.copyOf(lhsBatch);
            rhsBatch = List.copyOf(rhsBatch);
            lhsContracting = List.copyOf(lhsContracting);
            rhsContracting = List.copyOf(rhsContracting);
        }

        @Override
        public String mlir() {
            StringBuilder b = new StringBuilder("#stablehlo.dot<");
            String sep = "";
            String[] names = {"lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                "rhs_contracting_dimensions"};
            List<List<Long>> lists = List.of(lhsBatch, rhsBatch, lhsContracting, rhsContracting);
            for (int i = 0; i < 4; i++) {
                if (!lists.get(i).isEmpty()) {
                    b.append(sep).append(names[i]).append(" = ").append(lists.get(i));
                    sep = ", ";
                }
            }
            return b.append('>').toString();
        }
    }
}
