package dev.weft.lowering.ir;

import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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

    /**
     * A communication op's descriptor as the {@code backend_config} of its {@code custom_call}: runtimes read
     * {@code op} itself, its communicator a {@link dev.weft.spi.CommRef} that the executable binds; the text is its
     * printed form, a dictionary of the communicator's name and of the fields that mean something for that op
     * (peer, tag, source, receive tag, reduce op, root, the rows per rank of a variable-count collective), then the dtype and count of the data it moves
     * ({@code data}, null for none).
     */
    record CommConfig(CommOp op, Aval data) implements Attr {
        public CommConfig {
            op = op.symbolic();
        }

        /** The printed entries. */
        public Dict dict() {
            Map<String, Attr> c = new LinkedHashMap<>();
            c.put("comm", new Str(op.comm().name()));
            switch (op) {
                case CommOp.Send(var comm, int dest, int tag) -> peer(c, dest, tag);
                case CommOp.Isend(var comm, int dest, int tag) -> peer(c, dest, tag);
                case CommOp.Recv(var comm, int source, int tag, var result) -> peer(c, source, tag);
                case CommOp.Irecv(var comm, int source, int tag, var result) -> peer(c, source, tag);
                case CommOp.RecvAny(var comm, int source, int tag, var result) -> peer(c, source, tag);
                case CommOp.SendRecv(var comm, int dest, int sendTag, int source, int recvTag, var result) -> {
                    peer(c, dest, sendTag);
                    c.put("source", Int.i64(source));
                    c.put("recv_tag", Int.i64(recvTag));
                }
                case CommOp.AllReduce(var comm, var reduce) -> c.put("reduce_op", new Str(reduce.name()));
                case CommOp.ReduceScatter(var comm, var reduce) -> c.put("reduce_op", new Str(reduce.name()));
                case CommOp.Reduce(var comm, var reduce, int root) -> {
                    c.put("reduce_op", new Str(reduce.name()));
                    c.put("root", Int.i64(root));
                }
                case CommOp.Bcast(var comm, int root) -> c.put("root", Int.i64(root));
                case CommOp.Rank r -> {
                }
                case CommOp.Barrier b -> {
                }
                case CommOp.Wait w -> {
                }
                case CommOp.AllGather a -> {
                }
                case CommOp.AllToAll a -> {
                }
                case CommOp.AllGatherV(var comm, var counts) -> c.put("counts", new I64Array(counts));
                case CommOp.GatherV(var comm, var counts, int root) -> {
                    c.put("root", Int.i64(root));
                    c.put("counts", new I64Array(counts));
                }
                case CommOp.ScatterV(var comm, var counts, int root) -> {
                    c.put("root", Int.i64(root));
                    c.put("counts", new I64Array(counts));
                }
                case CommOp.AllToAllV(var comm, var send, var recv) -> {
                    c.put("send_counts", new I64Array(send));
                    c.put("recv_counts", new I64Array(recv));
                }
                case CommOp.IAllReduce(var comm, var reduce) -> c.put("reduce_op", new Str(reduce.name()));
                case CommOp.IReduceScatter(var comm, var reduce) -> c.put("reduce_op", new Str(reduce.name()));
                case CommOp.IBcast(var comm, int root) -> c.put("root", Int.i64(root));
                case CommOp.IAllGather a -> {
                }
                case CommOp.IAllToAll a -> {
                }
                case CommOp.IBarrier b -> {
                }
                case CommOp.CollectiveWait w -> c.put("start", new Str(w.start().kind().label()));
            }
            if (data != null) {
                c.put("dtype", new Str(data.dtype().specName()));
                c.put("count", Int.i64(data.shape().size()));
            }
            return new Dict(c);
        }

        private static void peer(Map<String, Attr> c, int peer, int tag) {
            c.put("peer", Int.i64(peer));
            c.put("tag", Int.i64(tag));
        }

        @Override
        public String mlir() {
            return dict().mlir();
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

    /**
     * Marks a {@code stablehlo.while} that counts, as lowering makes it ({@code Weft.fori}): its operand
     * {@code counter}, a rank-0 integer, starts at {@code lo}, the condition is {@code counter < hi} and the body
     * returns {@code counter + step} ({@code step > 0}) as the next counter. Executors take the trip count and the
     * counter from here, never from the regions' ops, so no rewrite of the regions can hide them. Printed under
     * {@link #KEY} as a dictionary, a discardable attribute like XLA's {@code known_trip_count}.
     */
    record CountedLoop(int counter, long lo, long hi, long step) implements Attr {
        public static final String KEY = "weft.counted_loop";

        /** {@code loop}'s count, if it is a counted loop. */
        public static Optional<CountedLoop> of(Op loop) {
            return loop.attr(KEY) instanceof CountedLoop c ? Optional.of(c) : Optional.empty();
        }

        /** How many times the body runs. */
        public long trips() {
            return hi <= lo ? 0 : Math.ceilDiv(hi - lo, step);
        }

        @Override
        public String mlir() {
            Map<String, Attr> d = new LinkedHashMap<>();
            d.put("counter", Int.i64(counter));
            d.put("lo", Int.i64(lo));
            d.put("hi", Int.i64(hi));
            d.put("step", Int.i64(step));
            return new Dict(d).mlir();
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
