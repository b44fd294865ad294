package dev.weft.spi;

import dev.weft.WeftException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The live communicator each {@link CommRef} of a lowered module stands for on this rank: given to a target when
 * it makes an executable, so that the module itself holds no runtime object and can outlive them.
 */
public final class CommBindings {
    /** No communicator: for programs that do not communicate. */
    public static final CommBindings NONE = new CommBindings(Map.of());

    private final Map<CommRef, CommHandle> handles;

    private CommBindings(Map<CommRef, CommHandle> handles) {
        this.handles = Map.copyOf(handles);
    }

    /** Each of {@code handles} bound to its reference; two handles may not share a name. */
    public static CommBindings of(Iterable<? extends CommHandle> handles) {
        Map<CommRef, CommHandle> m = new LinkedHashMap<>();
        for (CommHandle h : handles) {
            CommHandle before = m.putIfAbsent(h.ref(), h);
            if (before != null && before != h) {
                throw new WeftException(SourceLocation.UNKNOWN, "two communicators are named '" + h.name()
                        + "' in one program; a program names each communicator once");
            }
        }
        return new CommBindings(m);
    }

    /** The communicator {@code ref} stands for; an error at {@code where} if none is bound. */
    public CommHandle get(CommRef ref, SourceLocation where) {
        CommHandle h = handles.get(ref);
        if (h == null) {
            throw new WeftException(where, "communicator '" + ref + "' is not bound on this rank (bound: "
                    + handles.keySet() + ")");
        }
        return h;
    }
}
