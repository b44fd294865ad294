package dev.weft.lowering.ir;

import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommId;
import dev.weft.spi.CommRef;
import dev.weft.spi.Effect;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Module} as bytes and back: every function, block, op (name, operands, result types, attributes,
 * regions, full {@link SourceLocation} and {@link Effect}) and attribute, constants' contents included, values
 * numbered in definition order. Two modules with the same bytes are the same program, which is why the persistent
 * compile cache keys on them: unlike the MLIR text, the bytes hold everything an executor reads (the class and
 * method of each location, each op's effect). The target is not written; {@link #decode} is given it.
 *
 * <p>What cannot be rebuilt from bytes is not encoded: a custom {@link ReduceOp} (its function is Java code) and a
 * communicator bound by handle rather than by reference.
 */
public final class ModuleCodec {
    /** Changes whenever the format does. */
    private static final int FORMAT = 1;

    private ModuleCodec() {
    }

    /** The bytes of {@code module}, or empty when it holds something that cannot be rebuilt from bytes. */
    public static Optional<byte[]> encode(Module module) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            new Writer(out).module(module);
        } catch (Unencodable e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Optional.of(bytes.toByteArray());
    }

    /**
     * The module {@code bytes} encode, for {@code target}.
     *
     * @throws IllegalArgumentException if {@code bytes} are not a module this codec wrote
     */
    public static Module decode(byte[] bytes, String target) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            Module m = new Reader(in).module(target);
            if (in.read() != -1) {
                throw new IllegalArgumentException("bytes after the module");
            }
            return m;
        } catch (EOFException e) {
            throw new IllegalArgumentException("the module's bytes end early", e);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not an encoded module: " + e.getMessage(), e);
        }
    }

    /** Something in the module that bytes cannot carry. */
    private static final class Unencodable extends RuntimeException {
        Unencodable() {
            super(null, null, false, false);
        }
    }

    /** The tags of the sealed types, one byte each; {@link Reader} switches over the same numbers. */
    private static final int TENSOR = 0, TOKEN = 1;
    private static final int INT = 0, FLOAT = 1, BOOL = 2, STR = 3, I64_ARRAY = 4, DENSE = 5, OPAQUE = 6, DICT = 7,
            COMM_CONFIG = 8, ARRAY = 9, SYMBOL = 10, ENUM = 11, COUNTED_LOOP = 12, DOT_DIMENSIONS = 13;
    private static final int RANK = 0, BARRIER = 1, SEND = 2, RECV = 3, ISEND = 4, IRECV = 5, WAIT = 6,
            ALL_REDUCE = 7, ALL_GATHER = 8, REDUCE_SCATTER = 9, BCAST = 10, REDUCE = 11, ALL_TO_ALL = 12,
            SEND_RECV = 13, I_ALL_REDUCE = 14, I_ALL_GATHER = 15, I_REDUCE_SCATTER = 16, I_BCAST = 17,
            I_ALL_TO_ALL = 18, I_BARRIER = 19, WAIT_COLLECTIVE = 20, RECV_ANY = 21, ALL_GATHER_V = 22,
            GATHER_V = 23, SCATTER_V = 24, ALL_TO_ALL_V = 25;
    private static final Map<String, ReduceOp> BUILTIN_REDUCE_OPS = Map.of("sum", ReduceOp.SUM, "prod",
            ReduceOp.PROD, "min", ReduceOp.MIN, "max", ReduceOp.MAX);

    private static final class Writer {
        private final DataOutputStream out;
        private final Map<Value, Integer> ids = new IdentityHashMap<>();

        Writer(DataOutputStream out) {
            this.out = out;
        }

        void module(Module m) throws IOException {
            out.writeInt(FORMAT);
            out.writeInt(m.functions().size());
            for (Func f : m.functions()) {
                string(f.name());
                block(f.body());
            }
        }

        private void block(Block b) throws IOException {
            out.writeInt(b.arguments().size());
            for (Value v : b.arguments()) {
                define(v);
            }
            out.writeInt(b.ops().size());
            for (Op op : b.ops()) {
                op(op);
            }
        }

        private void define(Value v) throws IOException {
            ids.put(v, ids.size());
            type(v.type());
        }

        private void op(Op op) throws IOException {
            string(op.name());
            out.writeInt(op.operands().size());
            for (Value v : op.operands()) {
                Integer id = ids.get(v);
                if (id == null) {
                    throw new IllegalStateException("value used before its definition in " + op);
                }
                out.writeInt(id);
            }
            attributes(op.attributes());
            out.writeInt(op.regions().size());
            for (Block r : op.regions()) {
                block(r);
            }
            // After the regions, which cannot use them: the reader gets them from the op it makes.
            out.writeInt(op.results().size());
            for (Value v : op.results()) {
                define(v);
            }
            location(op.location());
            switch (op.effect()) {
                case Effect.Pure p -> out.writeByte(0);
                case Effect.Ordered(CommId comm) -> {
                    out.writeByte(1);
                    string(ref(comm).name());
                }
            }
        }

        private void location(SourceLocation l) throws IOException {
            string(l.className());
            string(l.method());
            string(l.file());
            out.writeInt(l.line());
        }

        private void type(Type t) throws IOException {
            switch (t) {
                case TensorType tt -> {
                    out.writeByte(TENSOR);
                    aval(tt.aval());
                }
                case TokenType k -> out.writeByte(TOKEN);
            }
        }

        private void aval(Aval a) throws IOException {
            string(a.dtype().name());
            long[] dims = a.shape().dims();
            out.writeInt(dims.length);
            for (long d : dims) {
                out.writeLong(d);
            }
        }

        private void attributes(Map<String, Attr> attrs) throws IOException {
            out.writeInt(attrs.size());
            for (Map.Entry<String, Attr> e : attrs.entrySet()) {
                string(e.getKey());
                attr(e.getValue());
            }
        }

        private void attr(Attr a) throws IOException {
            switch (a) {
                case Attr.Int(long value, String type) -> {
                    out.writeByte(INT);
                    out.writeLong(value);
                    string(type);
                }
                case Attr.Float(double value, String type) -> {
                    out.writeByte(FLOAT);
                    out.writeLong(Double.doubleToRawLongBits(value));
                    string(type);
                }
                case Attr.Bool(boolean value) -> {
                    out.writeByte(BOOL);
                    out.writeBoolean(value);
                }
                case Attr.Str(String value) -> {
                    out.writeByte(STR);
                    string(value);
                }
                case Attr.I64Array(List<Long> values) -> {
                    out.writeByte(I64_ARRAY);
                    longs(values);
                }
                case Attr.Dense(TensorType type, MemorySegment data) -> {
                    out.writeByte(DENSE);
                    aval(type.aval());
                    byte[] b = data.asSlice(0, type.byteSize()).toArray(ValueLayout.JAVA_BYTE);
                    out.writeInt(b.length);
                    out.write(b);
                }
                case Attr.Opaque(String text) -> {
                    out.writeByte(OPAQUE);
                    string(text);
                }
                case Attr.Dict(Map<String, Attr> entries) -> {
                    out.writeByte(DICT);
                    attributes(entries);
                }
                case Attr.CommConfig(CommOp op, Aval data) -> {
                    out.writeByte(COMM_CONFIG);
                    commOp(op);
                    out.writeBoolean(data != null);
                    if (data != null) {
                        aval(data);
                    }
                }
                case Attr.Array(List<Attr> elements) -> {
                    out.writeByte(ARRAY);
                    out.writeInt(elements.size());
                    for (Attr e : elements) {
                        attr(e);
                    }
                }
                case Attr.Symbol(String name) -> {
                    out.writeByte(SYMBOL);
                    string(name);
                }
                case Attr.Enum(String dialect, String kind, String value) -> {
                    out.writeByte(ENUM);
                    string(dialect);
                    string(kind);
                    string(value);
                }
                case Attr.CountedLoop(int counter, long lo, long hi, long step) -> {
                    out.writeByte(COUNTED_LOOP);
                    out.writeInt(counter);
                    out.writeLong(lo);
                    out.writeLong(hi);
                    out.writeLong(step);
                }
                case Attr.DotDimensions d -> {
                    out.writeByte(DOT_DIMENSIONS);
                    longs(d.lhsBatch());
                    longs(d.rhsBatch());
                    longs(d.lhsContracting());
                    longs(d.rhsContracting());
                }
            }
        }

        private void commOp(CommOp op) throws IOException {
            switch (op) {
                case CommOp.Rank(CommId c) -> tagged(RANK, c);
                case CommOp.Barrier(CommId c) -> tagged(BARRIER, c);
                case CommOp.Send(CommId c, int dest, int tag) -> {
                    tagged(SEND, c);
                    ints(dest, tag);
                }
                case CommOp.Recv(CommId c, int source, int tag, Aval result) -> {
                    tagged(RECV, c);
                    ints(source, tag);
                    aval(result);
                }
                case CommOp.Isend(CommId c, int dest, int tag) -> {
                    tagged(ISEND, c);
                    ints(dest, tag);
                }
                case CommOp.Irecv(CommId c, int source, int tag, Aval result) -> {
                    tagged(IRECV, c);
                    ints(source, tag);
                    aval(result);
                }
                case CommOp.Wait(CommOp.Start start) -> {
                    out.writeByte(WAIT);
                    commOp(start);
                }
                case CommOp.AllReduce(CommId c, ReduceOp r) -> {
                    tagged(ALL_REDUCE, c);
                    reduceOp(r);
                }
                case CommOp.AllGather(CommId c) -> tagged(ALL_GATHER, c);
                case CommOp.ReduceScatter(CommId c, ReduceOp r) -> {
                    tagged(REDUCE_SCATTER, c);
                    reduceOp(r);
                }
                case CommOp.Bcast(CommId c, int root) -> {
                    tagged(BCAST, c);
                    ints(root);
                }
                case CommOp.Reduce(CommId c, ReduceOp r, int root) -> {
                    tagged(REDUCE, c);
                    reduceOp(r);
                    ints(root);
                }
                case CommOp.AllToAll(CommId c) -> tagged(ALL_TO_ALL, c);
                case CommOp.AllGatherV(CommId c, List<Long> counts) -> {
                    tagged(ALL_GATHER_V, c);
                    longs(counts);
                }
                case CommOp.GatherV(CommId c, List<Long> counts, int root) -> {
                    tagged(GATHER_V, c);
                    longs(counts);
                    ints(root);
                }
                case CommOp.ScatterV(CommId c, List<Long> counts, int root) -> {
                    tagged(SCATTER_V, c);
                    longs(counts);
                    ints(root);
                }
                case CommOp.AllToAllV(CommId c, List<Long> send, List<Long> recv) -> {
                    tagged(ALL_TO_ALL_V, c);
                    longs(send);
                    longs(recv);
                }
                case CommOp.SendRecv(CommId c, int dest, int sendTag, int source, int recvTag, Aval result) -> {
                    tagged(SEND_RECV, c);
                    ints(dest, sendTag, source, recvTag);
                    aval(result);
                }
                case CommOp.RecvAny(CommId c, int source, int tag, Aval result) -> {
                    tagged(RECV_ANY, c);
                    ints(source, tag);
                    aval(result);
                }
                case CommOp.IAllReduce(CommId c, ReduceOp r) -> {
                    tagged(I_ALL_REDUCE, c);
                    reduceOp(r);
                }
                case CommOp.IAllGather(CommId c) -> tagged(I_ALL_GATHER, c);
                case CommOp.IReduceScatter(CommId c, ReduceOp r) -> {
                    tagged(I_REDUCE_SCATTER, c);
                    reduceOp(r);
                }
                case CommOp.IBcast(CommId c, int root) -> {
                    tagged(I_BCAST, c);
                    ints(root);
                }
                case CommOp.IAllToAll(CommId c) -> tagged(I_ALL_TO_ALL, c);
                case CommOp.IBarrier(CommId c) -> tagged(I_BARRIER, c);
                case CommOp.CollectiveWait(CommOp.CollectiveStart start) -> {
                    out.writeByte(WAIT_COLLECTIVE);
                    commOp(start);
                }
            }
        }

        private void tagged(int tag, CommId comm) throws IOException {
            out.writeByte(tag);
            string(ref(comm).name());
        }

        private static CommRef ref(CommId comm) {
            if (comm instanceof CommRef r) {
                return r;
            }
            throw new Unencodable();
        }

        private void reduceOp(ReduceOp r) throws IOException {
            if (r.isCustom() || BUILTIN_REDUCE_OPS.get(r.name()) != r) {
                throw new Unencodable();
            }
            string(r.name());
        }

        private void ints(int... values) throws IOException {
            for (int v : values) {
                out.writeInt(v);
            }
        }

        private void longs(List<Long> values) throws IOException {
            out.writeInt(values.size());
            for (long v : values) {
                out.writeLong(v);
            }
        }

        private void string(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }
    }

    private static final class Reader {
        private final DataInputStream in;
        private final List<Value> values = new ArrayList<>();

        Reader(DataInputStream in) {
            this.in = in;
        }

        Module module(String target) throws IOException {
            int format = in.readInt();
            if (format != FORMAT) {
                throw new IllegalArgumentException("format " + format + ", expected " + FORMAT);
            }
            int n = count();
            List<Func> functions = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String name = string();
                functions.add(new Func(name, block()));
            }
            return new Module(target, functions);
        }

        private Block block() throws IOException {
            int n = count();
            List<Value> args = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                args.add(define(type()));
            }
            int m = count();
            List<Op> ops = new ArrayList<>(m);
            for (int i = 0; i < m; i++) {
                ops.add(op());
            }
            return new Block(args, ops);
        }

        private Value define(Type t) {
            Value v = new Value(t);
            values.add(v);
            return v;
        }

        private Op op() throws IOException {
            String name = string();
            int n = count();
            List<Value> operands = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int id = in.readInt();
                if (id < 0 || id >= values.size()) {
                    throw new IllegalArgumentException("operand " + id + " of " + name + " is not defined yet");
                }
                operands.add(values.get(id));
            }
            Map<String, Attr> attrs = attributes();
            int k = count();
            List<Block> regions = new ArrayList<>(k);
            for (int i = 0; i < k; i++) {
                regions.add(block());
            }
            int r = count();
            List<Type> resultTypes = new ArrayList<>(r);
            for (int i = 0; i < r; i++) {
                resultTypes.add(type());
            }
            SourceLocation location = new SourceLocation(string(), string(), string(), in.readInt());
            Effect effect = switch (in.readByte()) {
                case 0 -> Effect.PURE;
                case 1 -> new Effect.Ordered(new CommRef(string()));
                default -> throw new IllegalArgumentException("bad effect of " + name);
            };
            Op op = new Op(name, operands, resultTypes, attrs, regions, location, effect);
            values.addAll(op.results());
            return op;
        }

        private Type type() throws IOException {
            return switch (in.readByte()) {
                case TENSOR -> TensorType.of(aval());
                case TOKEN -> TokenType.INSTANCE;
                default -> throw new IllegalArgumentException("bad type tag");
            };
        }

        private Aval aval() throws IOException {
            DType dtype = DType.valueOf(string());
            int rank = count();
            long[] dims = new long[rank];
            for (int i = 0; i < rank; i++) {
                dims[i] = in.readLong();
            }
            return new Aval(dtype, Shape.of(dims));
        }

        private Map<String, Attr> attributes() throws IOException {
            int n = count();
            Map<String, Attr> attrs = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String key = string();
                attrs.put(key, attr());
            }
            return attrs;
        }

        private Attr attr() throws IOException {
            return switch (in.readByte()) {
                case INT -> new Attr.Int(in.readLong(), string());
                case FLOAT -> new Attr.Float(Double.longBitsToDouble(in.readLong()), string());
                case BOOL -> new Attr.Bool(in.readBoolean());
                case STR -> new Attr.Str(string());
                case I64_ARRAY -> new Attr.I64Array(longs());
                case DENSE -> {
                    TensorType type = TensorType.of(aval());
                    int length = count();
                    if (length != type.byteSize()) {
                        throw new IllegalArgumentException("a constant of " + length + " bytes for " + type.mlir());
                    }
                    byte[] b = in.readNBytes(length);
                    if (b.length != length) {
                        throw new EOFException();
                    }
                    MemorySegment data = Arena.ofAuto().allocate(Math.max(1, length), 16);
                    MemorySegment.copy(b, 0, data, ValueLayout.JAVA_BYTE, 0, length);
                    yield new Attr.Dense(type, data.asSlice(0, length));
                }
                case OPAQUE -> new Attr.Opaque(string());
                case DICT -> new Attr.Dict(attributes());
                case COMM_CONFIG -> {
                    CommOp op = commOp();
                    yield new Attr.CommConfig(op, in.readBoolean() ? aval() : null);
                }
                case ARRAY -> {
                    int n = count();
                    List<Attr> elements = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        elements.add(attr());
                    }
                    yield new Attr.Array(elements);
                }
                case SYMBOL -> new Attr.Symbol(string());
                case ENUM -> new Attr.Enum(string(), string(), string());
                case COUNTED_LOOP -> new Attr.CountedLoop(in.readInt(), in.readLong(), in.readLong(), in.readLong());
                case DOT_DIMENSIONS -> new Attr.DotDimensions(longs(), longs(), longs(), longs());
                default -> throw new IllegalArgumentException("bad attribute tag");
            };
        }

        private CommOp commOp() throws IOException {
            int tag = in.readByte();
            if (tag == WAIT) {
                if (!(commOp() instanceof CommOp.Start start)) {
                    throw new IllegalArgumentException("a wait on no isend or irecv");
                }
                return new CommOp.Wait(start);
            }
            if (tag == WAIT_COLLECTIVE) {
                if (!(commOp() instanceof CommOp.CollectiveStart start)) {
                    throw new IllegalArgumentException("a collective wait on no nonblocking collective");
                }
                return new CommOp.CollectiveWait(start);
            }
            CommRef c = new CommRef(string());
            return switch (tag) {
                case RANK -> new CommOp.Rank(c);
                case BARRIER -> new CommOp.Barrier(c);
                case SEND -> new CommOp.Send(c, in.readInt(), in.readInt());
                case RECV -> new CommOp.Recv(c, in.readInt(), in.readInt(), aval());
                case ISEND -> new CommOp.Isend(c, in.readInt(), in.readInt());
                case IRECV -> new CommOp.Irecv(c, in.readInt(), in.readInt(), aval());
                case ALL_REDUCE -> new CommOp.AllReduce(c, reduceOp());
                case ALL_GATHER -> new CommOp.AllGather(c);
                case REDUCE_SCATTER -> new CommOp.ReduceScatter(c, reduceOp());
                case BCAST -> new CommOp.Bcast(c, in.readInt());
                case REDUCE -> new CommOp.Reduce(c, reduceOp(), in.readInt());
                case ALL_TO_ALL -> new CommOp.AllToAll(c);
                case ALL_GATHER_V -> new CommOp.AllGatherV(c, longs());
                case GATHER_V -> new CommOp.GatherV(c, longs(), in.readInt());
                case SCATTER_V -> new CommOp.ScatterV(c, longs(), in.readInt());
                case ALL_TO_ALL_V -> new CommOp.AllToAllV(c, longs(), longs());
                case SEND_RECV -> new CommOp.SendRecv(c, in.readInt(), in.readInt(), in.readInt(), in.readInt(),
                        aval());
                case RECV_ANY -> new CommOp.RecvAny(c, in.readInt(), in.readInt(), aval());
                case I_ALL_REDUCE -> new CommOp.IAllReduce(c, reduceOp());
                case I_ALL_GATHER -> new CommOp.IAllGather(c);
                case I_REDUCE_SCATTER -> new CommOp.IReduceScatter(c, reduceOp());
                case I_BCAST -> new CommOp.IBcast(c, in.readInt());
                case I_ALL_TO_ALL -> new CommOp.IAllToAll(c);
                case I_BARRIER -> new CommOp.IBarrier(c);
                default -> throw new IllegalArgumentException("bad communication tag " + tag);
            };
        }

        private ReduceOp reduceOp() throws IOException {
            String name = string();
            ReduceOp r = BUILTIN_REDUCE_OPS.get(name);
            if (r == null) {
                throw new IllegalArgumentException("no built-in reduce op '" + name + "'");
            }
            return r;
        }

        private List<Long> longs() throws IOException {
            int n = count();
            List<Long> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(in.readLong());
            }
            return out;
        }

        private int count() throws IOException {
            int n = in.readInt();
            if (n < 0 || n > in.available()) {
                throw new IllegalArgumentException("bad count " + n);
            }
            return n;
        }

        private String string() throws IOException {
            int n = count();
            byte[] b = in.readNBytes(n);
            if (b.length != n) {
                throw new EOFException();
            }
            return new String(b, StandardCharsets.UTF_8);
        }
    }
}
