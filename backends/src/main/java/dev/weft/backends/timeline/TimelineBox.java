package dev.weft.backends.timeline;

/** One complete event of a merged timeline, as the chart draws it: times in microseconds from the earliest event. */
public record TimelineBox(int rank, String category, String name, double start, double duration) {
    /** When the event ended. */
    public double end() {
        return start + duration;
    }
}
