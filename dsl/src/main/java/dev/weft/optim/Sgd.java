package dev.weft.optim;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.spi.Args;
import java.util.List;

/**
 * Stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight decay, PyTorch's
 * {@code torch.optim.SGD} update to the rounding: {@code g += wd·p}; with momentum {@code μ},
 * {@code buf = g} at the first step and {@code μ·buf + (1 - dampening)·g} after, {@code g = g + μ·buf} (Nesterov)
 * or {@code buf}; then {@code p -= lr·g}. A pure function of trees ({@link Trees}), usable inside {@code @Compile}
 * and {@code fori}: {@link #init} makes the state, {@link #update} the next parameters and state.
 *
 * @param lr          the learning rate
 * @param momentum    {@code μ}, 0 for none
 * @param dampening   PyTorch's dampening of the momentum buffer
 * @param nesterov    whether to use Nesterov momentum
 * @param weightDecay L2 penalty added to the gradient
 */
public record Sgd(Schedule lr, double momentum, double dampening, boolean nesterov, double weightDecay) {
    /** Plain SGD at the constant rate {@code lr}. */
    public static Sgd of(double lr) {
        return new Sgd(Schedule.constant(lr), 0, 0, false, 0);
    }

    /** SGD with momentum {@code momentum} at the constant rate {@code lr}. */
    public static Sgd momentum(double lr, double momentum) {
        return new Sgd(Schedule.constant(lr), momentum, 0, false, 0);
    }

    public Sgd {
        Args.notNull(lr, Sgd.class, "new", "lr");
    }

    /**
     * The state: the step count and, with momentum, a buffer per parameter.
     *
     * @param step f64 scalar, the number of updates made
     * @param buf  a tree of the parameters' structure (zeros at first), or the parameters themselves unused
     *             without momentum
     */
    public record State<T>(Tensor step, T buf) {
    }

    public <T> State<T> init(T params) {
        Args.notNull(params, Sgd.class, "init", "params");
        return new State<>(Tensor.scalar(DType.F64, 0), Trees.map(params, t -> Tensor.zeros(t.dtype(), t.shape())));
    }

    public <T> Update<T, State<T>> update(T grads, State<T> state, T params) {
        Args.notNull(grads, Sgd.class, "update", "grads");
        Args.notNull(state, Sgd.class, "update", "state");
        Args.notNull(params, Sgd.class, "update", "params");
        Tensor step = state.step().add(1);
        Tensor rate = lr.at(step);
        List<Tensor> p = Trees.leaves(params), g = Trees.leaves(grads), b = Trees.leaves(state.buf());
        Tensor first = step.eq(1);
        Tensor[] np = new Tensor[p.size()], nb = new Tensor[p.size()];
        for (int i = 0; i < p.size(); i++) {
            Tensor gi = weightDecay != 0 ? g.get(i).add(p.get(i).mul(weightDecay)) : g.get(i);
            Tensor bi = b.get(i);
            if (momentum != 0) {
                bi = Tensor.where(first, gi, bi.mul(momentum).add(gi.mul(1 - dampening)));
                gi = nesterov ? gi.add(bi.mul(momentum)) : bi;
            }
            np[i] = p.get(i).sub(gi.mul(rate.cast(gi.dtype())));
            nb[i] = bi;
        }
        return new Update<>(Trees.rebuild(params, List.of(np)), new State<>(step, Trees.rebuild(state.buf(),
                List.of(nb))));
    }
}
