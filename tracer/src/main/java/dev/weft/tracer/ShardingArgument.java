package dev.weft.tracer;

import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;

/** Lets {@code @Compile} methods take a {@link Sharding} or a {@link Mesh} as a compile-time constant. */
final class ShardingArgument implements ArgumentKind {
    @Override
    public boolean accepts(Class<?> type) {
        return type == Sharding.class || type == Mesh.class;
    }

    @Override
    public Object key(Object value) {
        return value;
    }

    @Override
    public String description() {
        return "shardings and meshes (Sharding, Mesh)";
    }
}
