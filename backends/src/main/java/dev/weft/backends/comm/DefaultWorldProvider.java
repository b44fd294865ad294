package dev.weft.backends.comm;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.spi.CommHandle;
import dev.weft.spi.WorldProvider;

/** The world of a thread with none bound: a one-rank world (MPI's singleton mode, without MPI). */
public final class DefaultWorldProvider implements WorldProvider {
    @Override
    public CommHandle world() {
        return FakeWorld.single();
    }
}
