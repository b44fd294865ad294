package dev.weft.optim;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.spi.Args;
import java.util.List;

/**
 * Adam and AdamW, PyTorch's {@code torch.optim.Adam} and {@code AdamW} updates in their order of operations, so
 * f64 results agree to the rounding: {@code m = β1·m + (1-β1)·g}, {@code v = β2·v + (1-β2)·g²},
 * {@code p -= (lr / (1-β1^t)) · m / (√v / √(1-β2^t) + eps)}; Adam adds {@code wd·p} to the gradient, AdamW first
 * multiplies {@code p} by {@code 1 - lr·wd} (decoupled decay). Pure functions of trees, usable inside
 * {@code @Compile} and {@code fori}.
 *
 * @param lr          the learning rate, as a function of the step
 * @param beta1       decay of the first moment
 * @param beta2       decay of the second moment
 * @param eps         added to the denominator
 * @param weightDecay the L2 penalty (Adam) or decoupled decay (AdamW)
 * @param decoupled   AdamW's decoupled weight decay
 */
public record Adam(Schedule lr, double beta1, double beta2, double eps, double weightDecay, boolean decoupled) {
    public Adam {
        Args.notNull(lr, Adam.class, "new", "lr");
    }

    /** Adam with PyTorch's defaults (β = 0.9, 0.999; eps = 1e-8; no weight decay) at the rate {@code lr}. */
    public static Adam of(double lr) {
        return new Adam(Schedule.constant(lr), 0.9, 0.999, 1e-8, 0, false);
    }

    /** AdamW with PyTorch's defaults (β = 0.9, 0.999; eps = 1e-8; weight decay 0.01) at the rate {@code lr}. */
    public static Adam adamW(double lr) {
        return new Adam(Schedule.constant(lr), 0.9, 0.999, 1e-8, 0.01, true);
    }

    /** This optimizer with the learning rate {@code lr} as a function of the step. */
    public Adam withSchedule(Schedule lr) {
        return new Adam(lr, beta1, beta2, eps, weightDecay, decoupled);
    }

    /**
     * The state: the step count and the two moments, trees of the parameters' structure.
     *
     * @param step f64 scalar, the number of updates made
     */
    public record State<T>(Tensor step, T m, T v) {
    }

    public <T> State<T> init(T params) {
        Args.notNull(params, Adam.class, "init", "params");
        T zeros = Trees.map(params, t -> Tensor.zeros(t.dtype(), t.shape()));
        return new State<>(Tensor.scalar(DType.F64, 0), zeros, zeros);
    }

    public <T> Update<T, State<T>> update(T grads, State<T> state, T params) {
        Args.notNull(grads, Adam.class, "update", "grads");
        Args.notNull(state, Adam.class, "update", "state");
        Args.notNull(params, Adam.class, "update", "params");
        Tensor step = state.step().add(1);
        Tensor rate = lr.at(step);
        Tensor bc1 = Tensor.scalar(DType.F64, beta1).pow(step).neg().add(1);
        Tensor bc2Sqrt = Tensor.scalar(DType.F64, beta2).pow(step).neg().add(1).sqrt();
        Tensor stepSize = rate.div(bc1);
        List<Tensor> p = Trees.leaves(params), g = Trees.leaves(grads);
        List<Tensor> m = Trees.leaves(state.m()), v = Trees.leaves(state.v());
        Tensor[] np = new Tensor[p.size()], nm = new Tensor[p.size()], nv = new Tensor[p.size()];
        for (int i = 0; i < p.size(); i++) {
            DType t = p.get(i).dtype();
            Tensor pi = p.get(i), gi = g.get(i);
            if (weightDecay != 0) {
                if (decoupled) {
                    pi = pi.mul(rate.mul(weightDecay).neg().add(1).cast(t));
                } else {
                    gi = gi.add(pi.mul(weightDecay));
                }
            }
            nm[i] = m.get(i).mul(beta1).add(gi.mul(1 - beta1));
            nv[i] = v.get(i).mul(beta2).add(gi.mul(gi).mul(1 - beta2));
            Tensor denom = nv[i].sqrt().div(bc2Sqrt.cast(t)).add(eps);
            np[i] = pi.sub(nm[i].div(denom).mul(stepSize.cast(t)));
        }
        return new Update<>(Trees.rebuild(params, List.of(np)), new State<>(step, Trees.rebuild(state.m(),
                List.of(nm)), Trees.rebuild(state.v(), List.of(nv))));
    }
}
