package dev.weft.prim;

import dev.weft.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Params;

/**
 * Parameters of a communication primitive. Unused fields are -1 (ranks, tags) or null. {@code peer} is the
 * destination of a send or the source of a receive; {@code source}/{@code recvTag} are the receive side of
 * {@code sendrecv}; {@code result} is the aval a receive or wait produces. The communicator compares by identity.
 */
public record CommParams(CommHandle comm, int peer, int tag, int source, int recvTag, ReduceOp op, int root,
                         Aval result) implements Params {

    public static CommParams of(CommHandle comm) {
        return new CommParams(comm, -1, -1, -1, -1, null, -1, null);
    }

    public static CommParams p2p(CommHandle comm, int peer, int tag, Aval result) {
        return new CommParams(comm, peer, tag, -1, -1, null, -1, result);
    }

    public static CommParams reduce(CommHandle comm, ReduceOp op, int root) {
        return new CommParams(comm, -1, -1, -1, -1, op, root, null);
    }

    public static CommParams rooted(CommHandle comm, int root) {
        return new CommParams(comm, -1, -1, -1, -1, null, root, null);
    }

    public static CommParams sendrecv(CommHandle comm, int dest, int sendTag, int source, int recvTag, Aval result) {
        return new CommParams(comm, dest, sendTag, source, recvTag, null, -1, result);
    }

    public static CommParams waitFor(CommHandle comm, Aval result) {
        return new CommParams(comm, -1, -1, -1, -1, null, -1, result);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("comm=").append(comm.name());
        if (peer >= 0) {
            b.append(" peer=").append(peer);
        }
        if (tag >= 0) {
            b.append(" tag=").append(tag);
        }
        if (source >= 0) {
            b.append(" source=").append(source).append(" recv_tag=").append(recvTag);
        }
        if (op != null) {
            b.append(" op=").append(op.name());
        }
        if (root >= 0) {
            b.append(" root=").append(root);
        }
        if (result != null) {
            b.append(" result=").append(result);
        }
        return b.toString();
    }
}
