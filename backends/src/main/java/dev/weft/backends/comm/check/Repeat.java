package dev.weft.backends.comm.check;

import java.util.List;

/** A {@code Weft.fori} loop: {@code body} run {@code times} times (kept as a block, not unrolled). */
public record Repeat(long times, List<ScheduleItem> body) implements ScheduleItem {
    public Repeat {
        body = List.copyOf(body);
    }
}
