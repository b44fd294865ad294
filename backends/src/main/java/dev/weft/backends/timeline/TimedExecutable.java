package dev.weft.backends.timeline;

import dev.weft.Tensor;
import dev.weft.tracer.Executable;
import java.util.List;

/** An executable whose runs are recorded as {@code call} events of the {@link Timeline}, named by the method. */
public record TimedExecutable(Executable inner, EventSite site) implements Executable {
    /** {@code inner}, compiled from {@code method} (like {@code Heat.step}), timed when a timeline is recorded. */
    public static Executable of(String method, Executable inner) {
        return Timeline.ENABLED ? new TimedExecutable(inner, EventSite.call(method)) : inner;
    }

    @Override
    public List<Tensor> run(List<Tensor> args) {
        long start = System.nanoTime();
        List<Tensor> results = inner.run(args);
        Timeline.record(site, start);
        return results;
    }

    @Override
    public void close() {
        inner.close();
    }
}
