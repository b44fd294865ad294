package dev.weft.backends.comm.check;

import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * A {@code Weft.cond} whose branches communicate differently, so which one runs depends on data: the check
 * compares its collectives as one block (both branches) and leaves its point-to-point operations unchecked.
 * Branches that communicate alike are inlined instead.
 */
public record Branch(List<ScheduleItem> whenTrue, List<ScheduleItem> whenFalse, SourceLocation where)
        implements ScheduleItem {
    public Branch {
        whenTrue = List.copyOf(whenTrue);
        whenFalse = List.copyOf(whenFalse);
    }
}
