package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import org.junit.jupiter.api.BeforeAll;

/**
 * Misuse of communication inside {@code @Compile} methods fails while tracing, before anything runs, with the line of
 * the offending call. Each kernel records that line ({@code CallSite.here()} on the same line, before the call).
 */
class CommTraceErrorsTest {
    /** Per rank thread: the line of the call expected in the error. */
    private static final ThreadLocal<String> LINE = new ThreadLocal<>();

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor neverWaited(Comm c, Tensor x) {
        LINE.set(CallSite.here()); c.isend(x, 0, 1);
        return x.add(1);
    }

    @Compile
    static Tensor waitedTwice(Comm c, Tensor x) {
        Request r = c.isend(x, 0, 1);
        Request in = c.irecv(x.dtype(), x.shape(), 0, 1);
        c.wait(r);
        Tensor got = c.wait(in);
        LINE.set(CallSite.here()); c.wait(r);
        return got;
    }

    @Compile
    static Tensor startedInLoopWaitedOutside(Comm c, Tensor x) {
        Request[] escaped = new Request[1];
        Tensor y = Weft.fori(0, 3, x, (i, acc) -> {
            escaped[0] = c.isend(acc, 0, 2);
            return acc.add(1);
        });
        LINE.set(CallSite.here()); c.wait(escaped[0]);
        return y;
    }

    @Compile
    static Tensor peerOutOfRange(Comm c, Tensor x) {
        LINE.set(CallSite.here()); c.send(x, c.size(), 0);
        return x;
    }

    @Compile
    static Tensor negativeSendTag(Comm c, Tensor x) {
        LINE.set(CallSite.here()); c.send(x, 0, -3);
        return x;
    }

    @Compile
    static Tensor rootOutOfRange(Comm c, Tensor x) {
        LINE.set(CallSite.here()); Tensor y = c.bcast(x, c.size() + 1);
        return y;
    }

    private static void failsAtTheRecordedLine(Runnable call, String... fragments) {
        LINE.remove();
        assertThatThrownBy(call::run).isInstanceOf(WeftException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(LINE.get())
                        .contains(fragments));
    }

    private static Tensor x() {
        return Tensor.of(new float[] {1, 2, 3});
    }

    @Ranks({1, 2})
    void requestNeverWaited(Comm c) {
        failsAtTheRecordedLine(() -> neverWaited(c, x()), "never waited");
    }

    @Ranks({1, 2})
    void requestWaitedTwice(Comm c) {
        failsAtTheRecordedLine(() -> waitedTwice(c, x()), "waited twice");
    }

    @Ranks({1, 2})
    void requestStartedInLoopAndWaitedOutside(Comm c) {
        failsAtTheRecordedLine(() -> startedInLoopWaitedOutside(c, x()), "outside the fori body");
    }

    @Ranks({1, 3})
    void peerOutOfRange(Comm c) {
        failsAtTheRecordedLine(() -> peerOutOfRange(c, x()), String.valueOf(c.size()));
    }

    @Ranks({1, 2})
    void negativeTag(Comm c) {
        failsAtTheRecordedLine(() -> negativeSendTag(c, x()), "-3");
    }

    @Ranks({1, 2})
    void rootOutOfRange(Comm c) {
        failsAtTheRecordedLine(() -> rootOutOfRange(c, x()), String.valueOf(c.size() + 1));
    }
}
