package dev.weft.it.optim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.optim.Adam;
import dev.weft.optim.Schedule;
import dev.weft.optim.Sgd;
import dev.weft.optim.Update;
import org.junit.jupiter.api.Test;

/**
 * The optimizers against plain-Java transcriptions of PyTorch 1.13's update loops ({@code _single_tensor_sgd},
 * {@code _single_tensor_adam}, {@code _single_tensor_adamw}), step by step on the same gradients, in f64: equal to
 * the last bit. (A compiled training step is the backends' OptimCompiledTest.)
 */
class OptimTest {
    record Params(Tensor w, Tensor b) {
    }

    private static final double[] W0 = {0.5, -1.25, 2}, B0 = {0.1};
    private static final double[][] GRADS = {{0.3, -0.2, 1.5, 0.7}, {-0.1, 0.4, -2, 0.05}, {1e-3, 0, 3, -0.4},
        {0.2, 0.2, 0.2, 0.2}, {-5, 1, 0.5, 1e-6}};

    static Params grads(int k) {
        double[] g = GRADS[k];
        return new Params(Tensor.of(new double[] {g[0], g[1], g[2]}), Tensor.of(new double[] {g[3]}));
    }

    static double[] flat(Params p) {
        double[] w = p.w().toDoubleArray(), b = p.b().toDoubleArray();
        return new double[] {w[0], w[1], w[2], b[0]};
    }

    @Test
    void sgdWithMomentumNesterovAndWeightDecayIsPyTorchs() {
        for (boolean nesterov : new boolean[] {false, true}) {
            Sgd opt = new Sgd(Schedule.constant(0.1), 0.9, nesterov ? 0 : 0.3, nesterov, 0.01);
            Params p = new Params(Tensor.of(W0), Tensor.of(B0));
            Sgd.State<Params> s = opt.init(p);
            double[] ref = {W0[0], W0[1], W0[2], B0[0]}, buf = new double[4];
            for (int k = 0; k < GRADS.length; k++) {
                Update<Params, Sgd.State<Params>> u = opt.update(grads(k), s, p);
                p = u.params();
                s = u.state();
                for (int i = 0; i < 4; i++) {
                    double d = GRADS[k][i] + ref[i] * 0.01;
                    buf[i] = k == 0 ? d : buf[i] * 0.9 + d * (1 - (nesterov ? 0 : 0.3));
                    d = nesterov ? d + buf[i] * 0.9 : buf[i];
                    ref[i] = ref[i] + d * -0.1;
                }
                assertThat(flat(p)).as("step %d, nesterov %s", k, nesterov).containsExactly(ref);
            }
        }
    }

    @Test
    void adamAndAdamWArePyTorchs() {
        for (boolean decoupled : new boolean[] {false, true}) {
            Adam opt = new Adam(Schedule.constant(1e-2), 0.9, 0.999, 1e-8, 0.05, decoupled);
            Params p = new Params(Tensor.of(W0), Tensor.of(B0));
            Adam.State<Params> s = opt.init(p);
            double[] ref = {W0[0], W0[1], W0[2], B0[0]}, m = new double[4], v = new double[4];
            for (int k = 0; k < GRADS.length; k++) {
                Update<Params, Adam.State<Params>> u = opt.update(grads(k), s, p);
                p = u.params();
                s = u.state();
                int step = k + 1;
                for (int i = 0; i < 4; i++) {
                    double g = GRADS[k][i];
                    if (decoupled) {
                        ref[i] = ref[i] * (1 - 1e-2 * 0.05);
                    } else {
                        g = g + ref[i] * 0.05;
                    }
                    m[i] = m[i] * 0.9 + g * (1 - 0.9);
                    v[i] = v[i] * 0.999 + g * g * (1 - 0.999);
                    double bc1 = 1 - Math.pow(0.9, step), bc2 = 1 - Math.pow(0.999, step);
                    double denom = Math.sqrt(v[i]) / Math.sqrt(bc2) + 1e-8;
                    ref[i] = ref[i] + -(1e-2 / bc1) * (m[i] / denom);
                }
                assertThat(flat(p)).as("step %d, decoupled %s", k, decoupled).containsExactly(ref);
            }
        }
    }
}
