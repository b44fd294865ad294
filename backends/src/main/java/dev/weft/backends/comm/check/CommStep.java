package dev.weft.backends.comm.check;

import dev.weft.comm.Comm;
import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.util.List;
import java.util.Locale;

/**
 * One communication operation of a schedule, as the ranks exchange it. A {@code sendrecv} is two steps, its send
 * and its receive.
 *
 * @param op         the operation's kind
 * @param collective whether it is a {@link CommOp.Collective}: every rank of the communicator must run the same
 *                   ones in order
 * @param receives for a point-to-point step, whether it receives ({@code peer} is then the source)
 * @param data     dtype and shape moved (operand, or what is received); null for {@code barrier}
 * @param root     root rank, or -1
 * @param reduce   reduce operation's name, or null
 * @param peer     destination or source rank of a point-to-point step ({@code recv_any}: or
 *                 {@code Comm.ANY_SOURCE}), or -1
 * @param tag      tag of a point-to-point step ({@code recv_any}: or {@code Comm.ANY_TAG}), or -1
 * @param counts   the rows per rank of a variable-count collective, which every rank must pass alike; else null
 */
public record CommStep(CommOp.Kind op, boolean collective, boolean receives, Aval data, int root, String reduce,
                       int peer, int tag, List<Long> counts, SourceLocation where) implements ScheduleItem {
    /** The step of collective {@code c} moving {@code data}. */
    public static CommStep of(CommOp.Collective c, Aval data, SourceLocation where) {
        List<Long> counts = c instanceof CommOp.Counted v ? v.counts() : null;
        return new CommStep(c.kind(), true, false, data, c instanceof CommOp.Rooted r ? r.root() : -1,
                c instanceof CommOp.Reducing r ? reduceName(r.op()) : null, -1, -1, counts, where);
    }

    /**
     * The step of {@code split} or {@code dup} ({@code kind}): collective over the communicator, so that a rank
     * making a communicator while another runs some other collective is a mismatch, not a hang; the colours and
     * keys of a split may differ by rank.
     */
    public static CommStep creation(CommOp.Kind kind, SourceLocation where) {
        return new CommStep(kind, true, false, null, -1, null, -1, -1, null, where);
    }

    /** A built-in operator's name as the runtime's ({@code SUM}), a custom one's as given. */
    private static String reduceName(dev.weft.comm.ReduceOp op) {
        return op.isCustom() ? op.name() : op.name().toUpperCase(Locale.ROOT);
    }

    /** One message of point-to-point {@code op}: sent to or, if {@code receives}, received from {@code peer}. */
    public static CommStep message(CommOp op, boolean receives, Aval data, int peer, int tag, SourceLocation where) {
        return new CommStep(op.kind(), false, receives, data, -1, null, peer, tag, null, where);
    }

    /** Whether this step is a collective: every rank of the communicator must run the same ones in order. */
    public boolean isCollective() {
        return collective;
    }

    /**
     * The hash of what the ranks of a collective must agree on: kind, dtype, count, root, reduce operation; for a
     * variable-count collective, whose operands differ in rows by rank, the counts and the elements of a row instead
     * of the count (an alltoallv's counts differ by rank: the elements of a row alone).
     */
    public long collectiveKey() {
        // The label's hash, the same in every process; an enum constant's own hash is not; so is a list's of longs.
        long count = counts != null ? SequenceHash.mix(counts.hashCode(), CommOp.rowElements(data))
                : op == CommOp.Kind.ALLTOALLV ? CommOp.rowElements(data) : count();
        return SequenceHash.mix(op.label().hashCode(), dtypeCode(), count, root,
                reduce == null ? 0 : reduce.hashCode());
    }

    /** The hash of what a send and its matching receive must agree on: dtype and element count. */
    public long messageKey() {
        return SequenceHash.mix(dtypeCode(), count());
    }

    private long dtypeCode() {
        return data == null ? -1 : data.dtype().ordinal();
    }

    private long count() {
        return data == null ? -1 : data.shape().size();
    }

    /** Like {@code allreduce(SUM) f32[4]}, {@code bcast(root 0) f32[4]}, {@code send(to 1, tag 3) f32[4]}. */
    public String describe() {
        StringBuilder args = new StringBuilder();
        if (reduce != null) {
            args.append(reduce.toUpperCase(Locale.ROOT));
        }
        if (root >= 0) {
            args.append(args.isEmpty() ? "" : ", ").append("root ").append(root);
        }
        if (counts != null) {
            args.append(args.isEmpty() ? "" : ", ").append("counts ").append(counts);
        }
        if (op == CommOp.Kind.RECV_ANY) {
            args.append("from ").append(peer == Comm.ANY_SOURCE ? "any" : String.valueOf(peer)).append(", tag ")
                    .append(tag == Comm.ANY_TAG ? "any" : String.valueOf(tag));
        } else if (peer >= 0) {
            args.append(receives ? "from " : "to ").append(peer).append(", tag ").append(tag);
        }
        String name = op == CommOp.Kind.SENDRECV ? (receives ? "sendrecv's recv" : "sendrecv's send") : op.label();
        return name + (args.isEmpty() ? "" : "(" + args + ")") + (data == null ? "" : " " + data);
    }

    /** This step with its source line unknown: equal to another such exactly when they communicate alike. */
    public CommStep withoutLocation() {
        return new CommStep(op, collective, receives, data, root, reduce, peer, tag, counts, SourceLocation.UNKNOWN);
    }

    /** {@link #describe()} and the user's line. */
    public String describeAt() {
        return describe() + " at " + where;
    }
}
