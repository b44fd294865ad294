package dev.weft.backends.comm.flight;

import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The doctor's analysis of synthetic dumps of two or three ranks. */
class FlightAnalysisTest {
    private static final long T0 = 1_700_000_000_000L;

    /** A rank's dump under construction: operations on communicators, numbered as a recorder numbers them. */
    private static final class Rank {
        final int rank;
        final int size;
        final List<FlightEntry> entries = new ArrayList<>();
        long collectives;

        Rank(int rank, int size) {
            this.rank = rank;
            this.size = size;
        }

        Rank collective(CommOp.Kind op, String dtype, long count, String reduce, int root, int line, FlightState state) {
            FlightCall c = new FlightCall(op, "world", rank, size, root, -1, -1, -1, dtype, count, reduce,
                    where(line));
            return add(c, ++collectives, state);
        }

        Rank p2p(CommOp.Kind op, int peer, int tag, int line, FlightState state) {
            return add(new FlightCall(op, "world", rank, size, peer, tag, -1, -1, "f32", 4, null, where(line)), -1,
                    state);
        }

        private Rank add(FlightCall c, long collective, FlightState state) {
            long seq = entries.size() + 1;
            entries.add(new FlightEntry(seq, c, collective, -1, state, T0 + seq * 100,
                    state == FlightState.COMPLETED ? T0 + seq * 100 + 1 : -1));
            return this;
        }

        FlightDump dump(String reason) {
            return new FlightDump(rank, size, reason, T0 + 5000, entries);
        }
    }

    private static SourceLocation where(int line) {
        return new SourceLocation("A", "main", "A.java", line);
    }

    private static String report(FlightDump... dumps) {
        return String.join("\n", FlightAnalysis.report(List.of(dumps)));
    }

    @Test
    void namesTheFirstCollectiveWhereTheRanksDiffer() {
        Rank r0 = new Rank(0, 2);
        Rank r1 = new Rank(1, 2);
        for (Rank r : List.of(r0, r1)) {
            r.collective(CommOp.Kind.BARRIER, null, -1, null, -1, 10, FlightState.COMPLETED)
                    .collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 11, FlightState.COMPLETED);
        }
        r0.collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 12, FlightState.STARTED);
        r1.collective(CommOp.Kind.BCAST, "f32", 4, null, 0, 14, FlightState.STARTED);
        String report = report(r0.dump("timeout"), r1.dump("signal"));
        assertThat(report).contains(
                "2 of 2 ranks dumped their flight recorder",
                "rank 0 (timeout): in allreduce f32[4] SUM on 'world' (collective #3) at A.java:12, for 4.70 s",
                "rank 1 (signal): in bcast f32[4] root 0 on 'world' (collective #3) at A.java:14",
                "on 'world' at collective #3:\n"
                        + "    rank 0 calls allreduce f32[4] SUM on 'world' (collective #3) at A.java:12 (started)\n"
                        + "    rank 1 calls bcast f32[4] root 0 on 'world' (collective #3) at A.java:14 (started)");
        assertThat(report).doesNotContain("collective #1:", "collective #2:");
    }

    @Test
    void countsAndReduceOperatorsAreCompared() {
        Rank r0 = new Rank(0, 2).collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 5, FlightState.COMPLETED);
        Rank r1 = new Rank(1, 2).collective(CommOp.Kind.ALLREDUCE, "f32", 4, "MAX", -1, 5, FlightState.COMPLETED);
        assertThat(report(r0.dump("end"), r1.dump("end"))).contains("on 'world' at collective #1:",
                "rank 1 calls allreduce f32[4] MAX");
    }

    @Test
    void aRankThatHasNotReachedTheCollectiveIsNamedWithWhereItIs() {
        Rank r0 = new Rank(0, 2).collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 10, FlightState.COMPLETED)
                .collective(CommOp.Kind.BARRIER, null, -1, null, -1, 12, FlightState.STARTED);
        Rank r1 = new Rank(1, 2).collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 10, FlightState.COMPLETED);
        assertThat(report(r0.dump("timeout"), r1.dump("end"))).contains(
                "rank 1 (end): in no communication; its last was allreduce f32[4] SUM on 'world' (collective #1) at "
                        + "A.java:10, completed",
                "on 'world' at collective #2:",
                "rank 0 calls barrier on 'world' (collective #2) at A.java:12 (started)",
                "rank 1 has not called it: it is in no communication; its last collective on 'world' was allreduce "
                        + "f32[4] SUM on 'world' (collective #1) at A.java:10");
    }

    @Test
    void collectivesARankNoLongerKeepsAreNotCompared() {
        Rank r0 = new Rank(0, 2);
        Rank r1 = new Rank(1, 2);
        for (int i = 1; i <= 8; i++) {
            r0.collective(CommOp.Kind.ALLREDUCE, "f32", 4, "SUM", -1, 20, FlightState.COMPLETED);
            r1.collective(i <= 2 ? CommOp.Kind.BARRIER : CommOp.Kind.ALLREDUCE, i <= 2 ? null : "f32", i <= 2 ? -1 : 4,
                    i <= 2 ? null : "SUM", -1, 20, FlightState.COMPLETED);
        }
        r0.entries.subList(0, 4).clear();
        assertThat(report(r0.dump("end"), r1.dump("end")))
                .contains("first divergence:\n  none found in the collectives recorded");
    }

    @Test
    void aReceiveWithoutAMatchingSendIsUnmatched() {
        Rank r0 = new Rank(0, 2).p2p(CommOp.Kind.RECV, 1, 5, 30, FlightState.STARTED);
        Rank r1 = new Rank(1, 2).p2p(CommOp.Kind.SEND, 0, 6, 40, FlightState.COMPLETED)
                .collective(CommOp.Kind.BARRIER, null, -1, null, -1, 41, FlightState.STARTED);
        assertThat(report(r0.dump("timeout"), r1.dump("timeout"))).contains(
                "unmatched point-to-point:\n  rank 0 waits to receive from rank 1 tag 5 on 'world' at A.java:30 "
                        + "(recv): rank 1 has no send to rank 0 with tag 5 pending; its recorded sends to rank 0: "
                        + "tag 6 at A.java:40 (completed)");
    }

    @Test
    void aPostedMatchingOperationIsAMatch() {
        Rank r0 = new Rank(0, 2).p2p(CommOp.Kind.RECV, 1, 5, 30, FlightState.STARTED);
        Rank r1 = new Rank(1, 2).p2p(CommOp.Kind.ISEND, 0, 5, 40, FlightState.POSTED)
                .collective(CommOp.Kind.BARRIER, null, -1, null, -1, 41, FlightState.STARTED);
        String report = report(r0.dump("timeout"), r1.dump("timeout"));
        assertThat(report).contains("unmatched point-to-point:\n  none found",
                "and has posted isend f32[4] to 0 tag 5 on 'world' at A.java:40 (#1), not waited");
    }

    @Test
    void aSendWhosePeerReceivesWithAnotherTagIsUnmatched() {
        Rank r0 = new Rank(0, 2).p2p(CommOp.Kind.SEND, 1, 2, 50, FlightState.STARTED);
        Rank r1 = new Rank(1, 2).p2p(CommOp.Kind.RECV, 0, 3, 60, FlightState.STARTED);
        assertThat(report(r0.dump("signal"), r1.dump("signal"))).contains(
                "rank 0 waits to send to rank 1 tag 2 on 'world' at A.java:50 (send): rank 1 has no receive from "
                        + "rank 0 with tag 2 pending; its recorded receives from rank 0: tag 3 at A.java:60 (started)",
                "rank 1 waits to receive from rank 0 tag 3 on 'world' at A.java:60 (recv): rank 0 has no send to "
                        + "rank 1 with tag 3 pending");
    }

    @Test
    void aWildcardReceiveMatchesAnySenderAndWaitsForNoOneRank() {
        Rank r0 = new Rank(0, 3).p2p(CommOp.Kind.SEND, 1, 2, 50, FlightState.STARTED);
        Rank r1 = new Rank(1, 3).p2p(CommOp.Kind.RECV_ANY, -1, -1, 60, FlightState.STARTED);
        Rank r2 = new Rank(2, 3).p2p(CommOp.Kind.SEND, 1, 7, 70, FlightState.STARTED);
        String report = report(r0.dump("signal"), r1.dump("signal"), r2.dump("signal"));
        assertThat(report).contains("rank 1 (signal): in recv_any f32[4] from any tag any on 'world' at A.java:60",
                "unmatched point-to-point:\n  none found");
        Rank named = new Rank(1, 3).p2p(CommOp.Kind.RECV_ANY, 2, -1, 60, FlightState.STARTED);
        assertThat(report(r0.dump("signal"), named.dump("signal"), r2.dump("signal"))).contains(
                "rank 0 waits to send to rank 1 tag 2 on 'world' at A.java:50 (send): rank 1 has no receive from "
                        + "rank 0 with tag 2 pending").doesNotContain("rank 2 waits to send", "recorded receives");
    }

    @Test
    void missingRanksAreNamed() {
        Rank r0 = new Rank(0, 3).collective(CommOp.Kind.BARRIER, null, -1, null, -1, 5, FlightState.STARTED);
        assertThat(report(r0.dump("timeout"))).startsWith("1 of 3 ranks dumped their flight recorder (no file for "
                + "ranks 1, 2)");
    }
}
