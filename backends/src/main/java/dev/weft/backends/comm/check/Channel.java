package dev.weft.backends.comm.check;

/** The point-to-point messages one rank sends to ({@code receives} false) or receives from a peer with a tag. */
record Channel(boolean receives, int peer, int tag) implements Comparable<Channel> {
    /** The channel of {@code step}, a point-to-point step. */
    static Channel of(CommStep step) {
        return new Channel(step.receives(), step.peer(), step.tag());
    }

    @Override
    public int compareTo(Channel o) {
        int c = Boolean.compare(receives, o.receives);
        c = c != 0 ? c : Integer.compare(peer, o.peer);
        return c != 0 ? c : Integer.compare(tag, o.tag);
    }
}
