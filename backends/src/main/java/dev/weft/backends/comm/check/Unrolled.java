package dev.weft.backends.comm.check;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Predicate;

/**
 * The steps of a schedule one at a time, loops unrolled lazily (only as far as they are read): either its
 * collectives, where a {@link Branch} whose branches run different collectives is one element, or the steps of
 * one point-to-point {@link Channel}, where branches are skipped (they are not checked).
 */
final class Unrolled {
    private final Deque<Frame> stack = new ArrayDeque<>();
    private final Predicate<CommStep> keep;
    private final boolean collectives;

    private static final class Frame {
        final List<ScheduleItem> items;
        int index;
        long tripsLeft;

        Frame(List<ScheduleItem> items, long trips) {
            this.items = items;
            this.tripsLeft = trips;
        }
    }

    private Unrolled(List<ScheduleItem> items, Predicate<CommStep> keep, boolean collectives) {
        this.keep = keep;
        this.collectives = collectives;
        stack.push(new Frame(items, 1));
    }

    static Unrolled collectives(List<ScheduleItem> items) {
        return new Unrolled(items, CommStep::isCollective, true);
    }

    static Unrolled channel(List<ScheduleItem> items, Channel channel) {
        return new Unrolled(items, s -> !s.isCollective() && Channel.of(s).equals(channel), false);
    }

    /** The next element (a {@link CommStep} or, for collectives, a {@link Branch}), or null at the end. */
    ScheduleItem next() {
        while (!stack.isEmpty()) {
            Frame f = stack.peek();
            if (f.index == f.items.size()) {
                f.index = 0;
                if (--f.tripsLeft <= 0) {
                    stack.pop();
                }
                continue;
            }
            ScheduleItem item = f.items.get(f.index++);
            switch (item) {
                case CommStep s -> {
                    if (keep.test(s)) {
                        return s;
                    }
                }
                case Repeat r -> stack.push(new Frame(r.body(), r.times()));
                case Branch b -> {
                    if (collectives) {
                        if (!Fingerprint.collectives(b.whenTrue()).equals(Fingerprint.collectives(b.whenFalse()))) {
                            return b;
                        }
                        stack.push(new Frame(b.whenTrue(), 1));
                    }
                }
            }
        }
        return null;
    }

    /** What the ranks must agree on about {@code element}, a result of {@link #next} (null: the end). */
    static long key(ScheduleItem element, boolean collective) {
        return switch (element) {
            case null -> 0;
            case CommStep s -> collective ? s.collectiveKey() : s.messageKey();
            case Branch b -> Fingerprint.branchKey(Fingerprint.collectives(b.whenTrue()).hash(),
                    Fingerprint.collectives(b.whenFalse()).hash());
            case Repeat r -> throw new IllegalArgumentException("a loop is never an element");
        };
    }
}
