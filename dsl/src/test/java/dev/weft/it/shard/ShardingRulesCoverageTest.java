package dev.weft.it.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.prim.reference.AllPrimitives;
import dev.weft.shard.ShardingRules;
import dev.weft.spi.Primitive;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every array and communication primitive has a sharding rule or is marked not shardable with a reason. */
class ShardingRulesCoverageTest {
    @Test
    void everyPrimitiveHasAShardingRuleOrAReason() {
        List<String> missing = new ArrayList<>();
        for (Primitive<?> p : AllPrimitives.all()) {
            if (!ShardingRules.has(p) && ShardingRules.whyNotShardable(p).isEmpty()) {
                missing.add(p.name());
            }
            assertThat(ShardingRules.has(p) && ShardingRules.whyNotShardable(p).isPresent()).as(p.name()).isFalse();
        }
        assertThat(missing).isEmpty();
    }
}
