package dev.weft.backends.comm.check;

import dev.weft.backends.comm.Communicator;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CommOp;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The communication schedule of a traced program, per communicator, in program order: {@code fori} loops become
 * {@link Repeat} blocks, a {@code cond} whose branches communicate alike is inlined and one whose branches differ
 * becomes a {@link Branch}, as does a communicating {@code whileLoop} (another step or the end). {@code comm_rank} and {@code wait} move no message and are left out.
 */
public final class ScheduleExtractor {
    private ScheduleExtractor() {
    }

    /** The schedule of {@code body} on each communicator it uses, in order of first use. */
    public static Map<Communicator, List<ScheduleItem>> of(Region body) {
        Map<Communicator, List<ScheduleItem>> out = new LinkedHashMap<>();
        for (Node n : body.nodes()) {
            if (n.params() instanceof CommOp p && p.handle() instanceof Communicator comm) {
                steps(n, p, out.computeIfAbsent(comm, c -> new ArrayList<>()));
            } else if (n.prim() == Prims.FORI && n.params() instanceof LoopParams lp) {
                long times = Math.max(0, (long) lp.hi() - lp.lo());
                ScheduleExtractor.of(n.regions().getFirst()).forEach((comm, items) -> {
                    if (times > 0) {
                        out.computeIfAbsent(comm, c -> new ArrayList<>()).add(new Repeat(times, items));
                    }
                });
            } else if (n.prim() == Prims.COND) {
                cond(n, out);
            } else if (n.prim() == Prims.WHILE) {
                whileLoop(n, out);
            } else {
                for (Region r : n.regions()) {
                    ScheduleExtractor.of(r).forEach((comm, items) ->
                            out.computeIfAbsent(comm, c -> new ArrayList<>()).addAll(items));
                }
            }
        }
        return out;
    }

    /**
     * A while loop runs its condition, then body and condition again, a number of times data decides: a
     * {@link Branch} between one more step (condition and body) and the end (the condition), on each communicator
     * either communicates on.
     */
    private static void whileLoop(Node n, Map<Communicator, List<ScheduleItem>> out) {
        Map<Communicator, List<ScheduleItem>> c = ScheduleExtractor.of(n.regions().get(0));
        Map<Communicator, List<ScheduleItem>> b = ScheduleExtractor.of(n.regions().get(1));
        Set<Communicator> comms = new LinkedHashSet<>(c.keySet());
        comms.addAll(b.keySet());
        for (Communicator comm : comms) {
            List<ScheduleItem> step = new ArrayList<>(c.getOrDefault(comm, List.of()));
            step.addAll(b.getOrDefault(comm, List.of()));
            out.computeIfAbsent(comm, k -> new ArrayList<>()).add(new Branch(step, c.getOrDefault(comm, List.of()),
                    n.location()));
        }
    }

    private static void cond(Node n, Map<Communicator, List<ScheduleItem>> out) {
        Map<Communicator, List<ScheduleItem>> t = ScheduleExtractor.of(n.regions().get(0));
        Map<Communicator, List<ScheduleItem>> f = ScheduleExtractor.of(n.regions().get(1));
        Set<Communicator> comms = new LinkedHashSet<>(t.keySet());
        comms.addAll(f.keySet());
        for (Communicator comm : comms) {
            List<ScheduleItem> a = t.getOrDefault(comm, List.of());
            List<ScheduleItem> b = f.getOrDefault(comm, List.of());
            List<ScheduleItem> items = out.computeIfAbsent(comm, c -> new ArrayList<>());
            if (alike(a, b)) {
                items.addAll(a);
            } else {
                items.add(new Branch(a, b, n.location()));
            }
        }
    }

    private static void steps(Node n, CommOp p, List<ScheduleItem> out) {
        List<Aval> in = n.inputs().stream().map(Var::aval).toList();
        SourceLocation where = n.location();
        switch (p) {
            case CommOp.Rank r -> {
            }
            case CommOp.Wait w -> {
            }
            case CommOp.CollectiveWait w -> {
            }
            case CommOp.Send(var c, int dest, int tag) -> out.add(CommStep.message(p, false, in.getFirst(), dest, tag,
                    where));
            case CommOp.Isend(var c, int dest, int tag) -> out.add(CommStep.message(p, false, in.getFirst(), dest, tag,
                    where));
            case CommOp.Recv(var c, int source, int tag, Aval result) -> out.add(CommStep.message(p, true, result,
                    source, tag, where));
            case CommOp.Irecv(var c, int source, int tag, Aval result) -> out.add(CommStep.message(p, true, result,
                    source, tag, where));
            case CommOp.RecvAny(var c, int source, int tag, Aval result) -> out.add(CommStep.message(p, true, result,
                    source, tag, where));
            case CommOp.SendRecv(var c, int dest, int sendTag, int source, int recvTag, Aval result) -> {
                out.add(CommStep.message(p, false, in.getFirst(), dest, sendTag, where));
                out.add(CommStep.message(p, true, result, source, recvTag, where));
            }
            case CommOp.Collective c -> out.add(CommStep.of(c, p.data(in), where));
        }
    }

    /** Whether two schedules communicate alike (source lines aside). */
    static boolean alike(List<ScheduleItem> a, List<ScheduleItem> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!alike(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean alike(ScheduleItem a, ScheduleItem b) {
        return switch (a) {
            case CommStep s -> b instanceof CommStep o && s.withoutLocation().equals(o.withoutLocation());
            case Repeat r -> b instanceof Repeat o && r.times() == o.times() && alike(r.body(), o.body());
            case Branch br -> b instanceof Branch o && alike(br.whenTrue(), o.whenTrue())
                    && alike(br.whenFalse(), o.whenFalse());
        };
    }
}
