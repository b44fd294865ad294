package dev.weft.backends.comm.check;

import dev.weft.DType;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** Schedules as bytes, for the ranks to exchange their full schedules when their fingerprints disagree. */
final class ScheduleCodec {
    private static final int STEP = 0;
    private static final int REPEAT = 1;
    private static final int BRANCH = 2;

    private ScheduleCodec() {
    }

    static byte[] encode(List<ScheduleItem> items) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(items, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static List<ScheduleItem> decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            return read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(List<ScheduleItem> items, DataOutputStream out) throws IOException {
        out.writeInt(items.size());
        for (ScheduleItem item : items) {
            switch (item) {
                case CommStep s -> {
                    out.writeByte(STEP);
                    out.writeUTF(s.op());
                    out.writeBoolean(s.isCollective());
                    out.writeBoolean(s.receives());
                    out.writeByte(s.data() == null ? -1 : s.data().dtype().ordinal());
                    if (s.data() != null) {
                        long[] dims = s.data().shape().dims();
                        out.writeInt(dims.length);
                        for (long d : dims) {
                            out.writeLong(d);
                        }
                    }
                    out.writeInt(s.root());
                    out.writeUTF(s.reduce() == null ? "" : s.reduce());
                    out.writeInt(s.peer());
                    out.writeInt(s.tag());
                    write(s.where(), out);
                }
                case Repeat r -> {
                    out.writeByte(REPEAT);
                    out.writeLong(r.times());
                    write(r.body(), out);
                }
                case Branch b -> {
                    out.writeByte(BRANCH);
                    write(b.whenTrue(), out);
                    write(b.whenFalse(), out);
                    write(b.where(), out);
                }
            }
        }
    }

    private static void write(SourceLocation where, DataOutputStream out) throws IOException {
        out.writeUTF(where.className());
        out.writeUTF(where.method());
        out.writeUTF(where.file());
        out.writeInt(where.line());
    }

    private static List<ScheduleItem> read(DataInputStream in) throws IOException {
        int n = in.readInt();
        List<ScheduleItem> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int kind = in.readByte();
            items.add(switch (kind) {
                case STEP -> step(in);
                case REPEAT -> new Repeat(in.readLong(), read(in));
                case BRANCH -> new Branch(read(in), read(in), location(in));
                default -> throw new IOException("bad schedule item " + kind);
            });
        }
        return items;
    }

    private static CommStep step(DataInputStream in) throws IOException {
        String op = in.readUTF();
        boolean collective = in.readBoolean();
        boolean receives = in.readBoolean();
        int dtype = in.readByte();
        Aval data = null;
        if (dtype >= 0) {
            long[] dims = new long[in.readInt()];
            for (int d = 0; d < dims.length; d++) {
                dims[d] = in.readLong();
            }
            data = new Aval(DType.values()[dtype], Shape.of(dims));
        }
        int root = in.readInt();
        String reduce = in.readUTF();
        int peer = in.readInt();
        int tag = in.readInt();
        return new CommStep(op, collective, receives, data, root, reduce.isEmpty() ? null : reduce, peer, tag,
                location(in));
    }

    private static SourceLocation location(DataInputStream in) throws IOException {
        return new SourceLocation(in.readUTF(), in.readUTF(), in.readUTF(), in.readInt());
    }
}
