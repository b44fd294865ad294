package dev.weft.backends.comm.flight;

import dev.weft.comm.Comm;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;

/**
 * One communication operation as a flight recorder describes it; a compiled program's call is described once and
 * shared by all its runs.
 *
 * @param op     the kind
 * @param comm   the communicator's name ({@code world}, {@code world.split(1)#0})
 * @param rank   the calling rank in {@code comm}
 * @param size   {@code comm}'s size
 * @param peer   destination, source or root (in {@code comm}); -1 for none, or a {@code recv_any}'s
 *               {@code Comm.ANY_SOURCE}
 * @param tag    the tag of a point-to-point operation; -1 for none, or a {@code recv_any}'s {@code Comm.ANY_TAG}
 * @param peer2  the source of a {@code sendrecv}; -1 for other operations
 * @param tag2   the receive tag of a {@code sendrecv}; -1 for other operations
 * @param dtype  element type's spec name ({@code f32}); null for none
 * @param count  elements (per rank for {@code allgather}, {@code reduce_scatter}, {@code alltoall}); -1 for none
 * @param reduce the reduce operator's name; null for none
 * @param where  the user's source line
 */
public record FlightCall(CommOp.Kind op, String comm, int rank, int size, int peer, int tag, int peer2, int tag2,
                         String dtype, long count, String reduce, SourceLocation where) {
    /** The operation's arguments, like {@code allreduce f32[4] SUM} or {@code recv f32[4] from 1 tag 5}. */
    public String args() {
        StringBuilder sb = new StringBuilder(op.label());
        if (dtype != null) {
            sb.append(' ').append(dtype).append('[').append(count).append(']');
        }
        if (reduce != null) {
            sb.append(' ').append(reduce);
        }
        switch (op) {
            case SEND, ISEND, WAIT_ISEND -> sb.append(" to ").append(peer).append(" tag ").append(tag);
            case RECV, IRECV, WAIT_IRECV -> sb.append(" from ").append(peer).append(" tag ").append(tag);
            case RECV_ANY -> sb.append(" from ").append(peer == Comm.ANY_SOURCE ? "any" : String.valueOf(peer))
                    .append(" tag ").append(tag == Comm.ANY_TAG ? "any" : String.valueOf(tag));
            case SENDRECV -> sb.append(" to ").append(peer).append(" tag ").append(tag).append(", from ").append(peer2)
                    .append(" tag ").append(tag2);
            case BCAST, REDUCE -> sb.append(" root ").append(peer);
            default -> {
            }
        }
        return sb.toString();
    }

    /** Whether two ranks' calls of a collective agree (kind, dtype, count, root, reduce operator). */
    public boolean sameCollective(FlightCall o) {
        return op == o.op && java.util.Objects.equals(dtype, o.dtype) && count == o.count && peer == o.peer
                && java.util.Objects.equals(reduce, o.reduce);
    }

    /** Like {@code allreduce f32[4] SUM on 'world' at A.java:12}. */
    @Override
    public String toString() {
        return args() + " on '" + comm + "' at " + where;
    }
}
