package dev.weft.it.comm;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.DeadlockException;
import dev.weft.comm.Comm;
import dev.weft.comm.Request;
import dev.weft.testing.RankRunner;
import dev.weft.testing.Ranks;
import java.util.function.BiFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A blocking send waits for its receive on fake ranks, eager and compiled alike, so a 4 MiB exchange that relies on
 * buffering deadlocks as it may under MPI, and the exchanges an MPI programmer writes complete.
 */
class BlockingSendTest {
    private static final long FOUR_MIB_OF_F32 = 1 << 20;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static Tensor mine(Comm c) {
        return Tensor.full(DType.F32, c.rank() + 1, FOUR_MIB_OF_F32);
    }

    private static Tensor peers(Comm c) {
        return Tensor.full(DType.F32, 2 - c.rank(), FOUR_MIB_OF_F32);
    }

    private static Tensor sendThenRecv(Comm c, Tensor x) {
        int peer = 1 - c.rank();
        c.send(x, peer, 0);
        return c.recv(x.dtype(), x.shape(), peer, 0);
    }

    @Compile
    static Tensor compiledSendThenRecv(Comm c, Tensor x) {
        return sendThenRecv(c, x);
    }

    @Compile
    static Tensor compiledSendrecv(Comm c, Tensor x) {
        return c.sendrecv(x, 1 - c.rank(), 1 - c.rank(), 0);
    }

    @Compile
    static Tensor compiledIsendIrecv(Comm c, Tensor x) {
        int peer = 1 - c.rank();
        Request in = c.irecv(x.dtype(), x.shape(), peer, 0);
        Request out = c.isend(x, peer, 0);
        Tensor got = c.wait(in);
        c.wait(out);
        return got;
    }

    private static void assertDeadlocksInSends(BiFunction<Comm, Tensor, Tensor> exchange) {
        assertThatThrownBy(() -> RankRunner.run(2, c -> exchange.apply(c, mine(c))))
                .isInstanceOf(AssertionError.class).hasMessageContaining("2 of 2 ranks failed")
                .cause().isInstanceOf(DeadlockException.class)
                .hasMessageContaining("rank 0: blocked in send(1048576 x f32) on 'world' to rank 1 tag 0 at "
                        + "BlockingSendTest.java:")
                .hasMessageContaining("rank 1: blocked in send(1048576 x f32) on 'world' to rank 0 tag 0 at ")
                .hasMessageContaining("a blocked send waits for a matching receive: MPI does not promise to buffer "
                        + "sends")
                .hasMessageContaining("exchange with sendrecv, or start isend and irecv and then wait for both");
    }

    @Test
    void anEagerExchangeRelyingOnBufferingDeadlocks() {
        assertDeadlocksInSends(BlockingSendTest::sendThenRecv);
    }

    @Test
    void aCompiledExchangeRelyingOnBufferingDeadlocks() {
        assertDeadlocksInSends(BlockingSendTest::compiledSendThenRecv);
    }

    @Ranks(2)
    void sendrecvExchangesBothWays(Comm c) {
        assertThat(c.sendrecv(mine(c), 1 - c.rank(), 1 - c.rank(), 0)).isEqualTo(peers(c));
        assertThat(compiledSendrecv(c, mine(c))).isEqualTo(peers(c));
    }

    @Ranks(2)
    void isendIrecvWaitExchangesBothWays(Comm c) {
        assertThat(compiledIsendIrecv(c, mine(c))).isEqualTo(peers(c));
    }
}
