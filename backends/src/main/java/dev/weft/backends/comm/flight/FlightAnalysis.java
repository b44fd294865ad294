package dev.weft.backends.comm.flight;

import dev.weft.comm.Comm;
import dev.weft.prim.CommOp;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What {@code bin/weft doctor} says about the ranks' flight dumps: where each rank waits, the first collective at
 * which the ranks of a communicator diverged (by its number on that communicator), and point-to-point operations
 * that wait for a peer that has no matching one pending. Ranks are world ranks; peers are mapped from communicator
 * ranks to world ranks through the dumps (a peer whose dump is missing keeps its communicator rank).
 *
 * <p>A dump holds only each rank's last operations: collectives older than a rank's oldest kept one are not
 * compared, and a completed eager send (MPI may buffer small ones) no longer shows as pending.
 */
public final class FlightAnalysis {
    private final Map<Integer, FlightDump> dumps = new TreeMap<>();
    /** World rank of each (communicator, communicator rank) seen. */
    private final Map<String, Map<Integer, Integer>> members = new TreeMap<>();

    private FlightAnalysis(List<FlightDump> dumps) {
        for (FlightDump d : dumps) {
            this.dumps.put(d.rank(), d);
            for (FlightEntry e : d.entries()) {
                members.computeIfAbsent(e.call().comm(), c -> new TreeMap<>()).put(e.call().rank(), d.rank());
            }
        }
    }

    /** The report on {@code dumps} (one per rank), as lines. */
    public static List<String> report(List<FlightDump> dumps) {
        return new FlightAnalysis(dumps).report();
    }

    private List<String> report() {
        List<String> out = new ArrayList<>();
        int size = dumps.values().stream().mapToInt(FlightDump::size).max().orElse(0);
        Set<Integer> missing = new TreeSet<>();
        for (int r = 0; r < size; r++) {
            if (!dumps.containsKey(r)) {
                missing.add(r);
            }
        }
        out.add(String.format("%d of %d ranks dumped their flight recorder%s", dumps.size(), size,
                missing.isEmpty() ? "" : " (no file for rank" + (missing.size() == 1 ? " " : "s ")
                        + join(missing) + ")"));
        out.add("where each rank waits:");
        dumps.values().forEach(d -> out.addAll(waits(d)));
        List<String> divergence = divergence();
        out.add("first divergence:");
        out.addAll(divergence.isEmpty() ? List.of("  none found in the collectives recorded") : divergence);
        List<String> unmatched = unmatched();
        out.add("unmatched point-to-point:");
        out.addAll(unmatched.isEmpty() ? List.of("  none found") : unmatched);
        return out;
    }

    private List<String> waits(FlightDump d) {
        List<String> lines = new ArrayList<>();
        String head = "  rank " + d.rank() + " (" + d.reason() + "): ";
        for (FlightEntry e : d.entries()) {
            if (e.state() == FlightState.STARTED) {
                lines.add(head + "in " + describe(e) + ", for " + d.secondsSince(e.startMillis()) + " s");
            }
        }
        if (lines.isEmpty()) {
            FlightEntry last = d.entries().isEmpty() ? null : d.entries().getLast();
            lines.add(head + "in no communication" + (last == null ? " (none recorded)"
                    : "; its last was " + describe(last) + ", " + last.state().label()));
        }
        for (FlightEntry e : d.entries()) {
            if (e.state() == FlightState.POSTED) {
                lines.add("    and has posted " + describe(e) + " (#" + e.seq() + "), not waited");
            }
        }
        return lines;
    }

    /** For each communicator, the first collective number at which its ranks' calls differ. */
    private List<String> divergence() {
        List<String> lines = new ArrayList<>();
        members.forEach((comm, byCommRank) -> {
            Map<Integer, Map<Long, FlightEntry>> calls = new TreeMap<>();
            Map<Integer, long[]> range = new HashMap<>();
            byCommRank.forEach((commRank, worldRank) -> {
                TreeMap<Long, FlightEntry> mine = new TreeMap<>();
                for (FlightEntry e : dumps.get(worldRank).entries()) {
                    if (e.call().comm().equals(comm) && e.collective() > 0) {
                        mine.put(e.collective(), e);
                    }
                }
                calls.put(worldRank, mine);
                range.put(worldRank, mine.isEmpty() ? new long[] {Long.MAX_VALUE, 0}
                        : new long[] {mine.firstKey(), mine.lastKey()});
            });
            if (calls.size() < 2) {
                return;
            }
            long from = range.values().stream().mapToLong(r -> r[0] == Long.MAX_VALUE ? 1 : r[0]).max().orElse(1);
            long to = range.values().stream().mapToLong(r -> r[1]).max().orElse(0);
            for (long k = from; k <= to; k++) {
                long n = k;
                List<FlightEntry> present = calls.values().stream().map(m -> m.get(n)).filter(Objects::nonNull)
                        .toList();
                boolean differ = present.stream().anyMatch(e -> !e.call().sameCollective(present.getFirst().call()));
                if (!differ && present.size() == calls.size()) {
                    continue;
                }
                lines.add(String.format("  on '%s' at collective #%d:", comm, k));
                calls.forEach((rank, m) -> {
                    FlightEntry e = m.get(n);
                    if (e != null) {
                        lines.add(String.format("    rank %d calls %s (%s)", rank, describe(e), e.state().label()));
                    } else {
                        lines.add(String.format("    rank %d has not called it: %s", rank, elsewhere(rank, comm)));
                    }
                });
                break;
            }
        });
        return lines;
    }

    /** What a rank that has not reached a collective does instead. */
    private String elsewhere(int rank, String comm) {
        FlightDump d = dumps.get(rank);
        FlightEntry blocked = d.blocked().orElse(null);
        if (blocked != null) {
            return "it waits in " + describe(blocked);
        }
        FlightEntry last = d.entries().stream().filter(e -> e.call().comm().equals(comm) && e.collective() > 0)
                .max(Comparator.comparingLong(FlightEntry::collective)).orElse(null);
        return "it is in no communication" + (last == null ? "" : "; its last collective on '" + comm + "' was "
                + describe(last));
    }

    /**
     * Point-to-point operations that wait (started) while their peer has no matching operation pending: same
     * communicator, the peer's peer is this rank, same tag, the opposite direction.
     */
    private List<String> unmatched() {
        List<String> lines = new ArrayList<>();
        for (FlightDump d : dumps.values()) {
            for (FlightEntry e : d.entries()) {
                if (e.state() != FlightState.STARTED) {
                    continue;
                }
                FlightCall c = e.call();
                // a receive from any rank waits for no one rank: the ranks' sends to it are checked instead
                if (c.op().receives() && !(c.op() == CommOp.Kind.RECV_ANY && c.peer() == Comm.ANY_SOURCE)) {
                    check(lines, d.rank(), e, false);
                }
                if (c.op().sends()) {
                    check(lines, d.rank(), e, true);
                }
            }
        }
        return lines;
    }

    /** Adds a line when the peer of {@code e}'s send (or receive) has no matching receive (or send) pending. */
    private void check(List<String> lines, int rank, FlightEntry e, boolean send) {
        FlightCall c = e.call();
        boolean second = c.op() == CommOp.Kind.SENDRECV && !send;
        int peer = second ? c.peer2() : c.peer();
        int tag = second ? c.tag2() : c.tag();
        Integer peerRank = members.getOrDefault(c.comm(), Map.of()).get(peer);
        String what = send ? "send to" : "receive from";
        String counter = send ? "receive from" : "send to";
        String head = String.format("  rank %d waits to %s rank %d tag %d on '%s' at %s (%s): ", rank,
                what, peerRank == null ? peer : peerRank, tag, c.comm(), c.where(), c.op().label());
        if (peerRank == null || !dumps.containsKey(peerRank)) {
            lines.add(head + "no dump of that rank to compare with");
            return;
        }
        List<FlightEntry> pending = new ArrayList<>();
        Set<String> others = new LinkedHashSet<>();
        for (FlightEntry p : dumps.get(peerRank).entries()) {
            FlightCall pc = p.call();
            if (!pc.comm().equals(c.comm())) {
                continue;
            }
            boolean counterpart = send ? pc.op().receives() : pc.op().sends();
            if (!counterpart || p.call().op() == CommOp.Kind.IRECV && p.state() != FlightState.POSTED
                    || p.call().op() == CommOp.Kind.ISEND && p.state() != FlightState.POSTED) {
                continue;
            }
            boolean pSecond = pc.op() == CommOp.Kind.SENDRECV && send;
            int pPeer = pSecond ? pc.peer2() : pc.peer();
            int pTag = pSecond ? pc.tag2() : pc.tag();
            boolean wildcard = pc.op() == CommOp.Kind.RECV_ANY;
            if (pPeer != c.rank() && !(wildcard && pPeer == Comm.ANY_SOURCE)) {
                continue;
            }
            boolean anyTag = c.op() == CommOp.Kind.RECV_ANY && tag == Comm.ANY_TAG
                    || wildcard && pTag == Comm.ANY_TAG;
            if ((pTag == tag || anyTag) && p.pending()) {
                pending.add(p);
            } else {
                others.add(String.format("tag %d at %s (%s)", pTag, pc.where(), p.state().label()));
            }
        }
        if (!pending.isEmpty()) {
            FlightEntry p = pending.getFirst();
            if (!Objects.equals(p.call().dtype(), c.dtype()) || p.call().count() != c.count()) {
                lines.add(head + String.format("rank %d's matching %s is %s", peerRank, p.call().op().label(),
                        describe(p)) + ": the dtypes or counts differ");
            }
            return;
        }
        lines.add(head + String.format("rank %d has no %s rank %d with tag %d pending%s", peerRank, counter, rank, tag,
                others.isEmpty() ? "" : "; its recorded " + (send ? "receives from" : "sends to") + " rank " + rank + ": "
                        + String.join(", ", others)));
    }

    private static String describe(FlightEntry e) {
        String coll = e.collective() > 0 ? " (collective #" + e.collective() + ")" : "";
        return e.call().args() + " on '" + e.call().comm() + "'" + coll + " at " + e.call().where();
    }

    private static String join(Set<Integer> ranks) {
        return String.join(", ", ranks.stream().map(String::valueOf).toList());
    }
}
