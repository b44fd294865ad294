package dev.weft.it.optim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.it.optim.OptimTest.Params;
import dev.weft.optim.Adam;
import dev.weft.optim.Schedule;
import dev.weft.optim.Update;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A compiled training step with a decaying rate traces once (dsl's OptimTest checks the updates). */
class OptimCompiledTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    static int traces;

    /** One training step of least squares on {@code x, y}, with Adam at an exponentially decaying rate. */
    @Compile
    static List<Object> trainStep(Params p, Adam.State<Params> s, Tensor x, Tensor y) {
        traces++;
        Adam opt = Adam.of(0.05).withSchedule(Schedule.exponential(0.05, 0.9));
        Params g = Weft.grad(p, q -> {
            Tensor r = x.matmul(q.w()).add(q.b()).sub(y);
            return r.mul(r).mean();
        });
        Update<Params, Adam.State<Params>> u = opt.update(g, s, p);
        return List.of(u.params(), u.state());
    }

    @Test
    @SuppressWarnings("unchecked")
    void aTrainingLoopWithADecayingRateCompilesOnce() {
        Tensor x = Tensor.of(new double[] {1, 0, 2, 0, 1, -1, 3, 1, 0, -1, 2, 2}, 4, 3);
        Tensor y = Tensor.of(new double[] {1, 2, 3, 0});
        Params p = new Params(Tensor.zeros(DType.F64, 3), Tensor.zeros(DType.F64, 1));
        Adam.State<Params> s = Adam.of(0.05).init(p);
        int before = traces;
        double first = Double.NaN, last = 0;
        for (int k = 0; k < 30; k++) {
            List<Object> out = trainStep(p, s, x, y);
            p = (Params) out.get(0);
            s = (Adam.State<Params>) out.get(1);
            Tensor r = x.matmul(p.w()).add(p.b()).sub(y);
            last = r.mul(r).mean().item();
            first = Double.isNaN(first) ? last : first;
        }
        assertThat(traces - before).isEqualTo(1);
        assertThat(s.step().item()).isEqualTo(30);
        assertThat(last).isLessThan(first);
    }
}
