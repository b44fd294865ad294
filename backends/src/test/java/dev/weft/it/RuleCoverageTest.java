package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.ad.AdRules;
import dev.weft.backends.cpu.CpuEagerInterpreter;
import dev.weft.backends.cpu.CpuEagerInterpreterProvider;
import dev.weft.batching.BatchRules;
import dev.weft.lowering.LoweringRules;
import dev.weft.lowering.Target;
import dev.weft.lowering.Targets;
import dev.weft.prim.reference.AllPrimitives;
import dev.weft.spi.Primitive;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every primitive, array and communication, has each of its rules: shape (by construction), eager, lowering on
 * every target (cpu and gpu), a JVP rule and a batching rule, or a stated reason to have none.
 */
public class RuleCoverageTest {
    @Test
    void everyPrimitiveHasEveryRule() {
        CpuEagerInterpreter eager = (CpuEagerInterpreter) new CpuEagerInterpreterProvider().eagerInterpreter();
        LoweringRules lowering = LoweringRules.discover();
        List<String> missing = new ArrayList<>();
        for (Primitive<?> p : AllPrimitives.all()) {
            if (!eager.has(p)) {
                missing.add(p.name() + ": eager");
            }
            for (Target target : Targets.all()) {
                if (!lowering.has(p, target)) {
                    missing.add(p.name() + ": lowering on " + target.name());
                }
            }
            if (!AdRules.hasJvp(p) && AdRules.whyNotDifferentiable(p).isEmpty()) {
                missing.add(p.name() + ": jvp (or a reason)");
            }
            if (!BatchRules.hasRule(p) && BatchRules.whyUnbatched(p).isEmpty()) {
                missing.add(p.name() + ": batching (or a reason)");
            }
        }
        assertThat(missing).isEmpty();
        assertThat(AllPrimitives.all()).hasSizeGreaterThan(50);
        assertThat(Targets.all()).extracting(Target::name).containsExactly("cpu", "gpu");
    }
}
