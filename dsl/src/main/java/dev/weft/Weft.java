package dev.weft;

import dev.weft.ad.Autodiff;
import dev.weft.ad.LinearTranspose;
import dev.weft.batching.Vmap;
import dev.weft.graph.ControlFlow;
import dev.weft.graph.TreeControlFlow;
import dev.weft.graph.CustomCalls;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.WeftRuntime;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Entry points: traced control flow, automatic differentiation, batching, agent installation and lowering. A {@code null}
 * argument (or element of a list argument) raises a {@link NullArgumentException} naming it and the line.
 */
public final class Weft {
    private Weft() {
    }

    private static final class Runtime {
        static final WeftRuntime INSTANCE = ServiceLoader.load(WeftRuntime.class).findFirst()
                .orElseThrow(() -> new WeftException(SourceLocation.capture(),
                        "no Weft runtime on the class path: add dev.weft:weft-backends"));
    }

    /**
     * A loop {@code for (i = lo; i < hi; i++) carry = body(i, carry)}, one loop in the program (not unrolled).
     * {@code i} is an I32 scalar tensor; the body must return a tensor of the carry's dtype and shape.
     *
     * <p>As in JAX, the body is traced once, on traced tensors, into a closed region (whatever it uses from
     * outside becomes an input of the loop), and that region runs {@code hi - lo} times: eagerly, then compiled,
     * inside {@code @Compile}. So the body's Java code runs once per call of {@code fori}, not once per
     * iteration (a {@code println} in it prints once), and it cannot read its tensors' values ({@code item()},
     * a Java {@code if} on data): use {@link #cond} and {@link Tensor#where}. A tensor the body computes belongs to
     * that trace: keeping it and using it after the loop is a {@link TracedValueException}.
     */
    public static Tensor fori(int lo, int hi, Tensor init, BiFunction<Tensor, Tensor, Tensor> body) {
        Args.notNull(init, Weft.class, "fori", "init");
        Args.notNull(body, Weft.class, "fori", "body");
        return ControlFlow.fori(lo, hi, List.of(init), (i, c) -> List.of(body.apply(i, c.getFirst())),
                SourceLocation.capture()).getFirst();
    }

    /** {@link #fori(int, int, Tensor, BiFunction)} with several carried tensors. */
    public static List<Tensor> fori(int lo, int hi, List<Tensor> init,
                                    BiFunction<Tensor, List<Tensor>, List<Tensor>> body) {
        Args.noNulls(init, Weft.class, "fori", "init");
        Args.notNull(body, Weft.class, "fori", "body");
        return ControlFlow.fori(lo, hi, List.copyOf(init), body, SourceLocation.capture());
    }

    /**
     * {@code while (cond(carry)) carry = body(carry)} (JAX's {@code while_loop}) for a carried tree (a tensor, or a
     * list, map, array or record of them; see {@link Trees}): a loop whose trip count depends on the data, such as
     * an iterative solve until the residual is small. {@code cond} returns a BOOL scalar; {@code body} returns a
     * tree of the carry's structure, dtypes and shapes. Both are traced once into closed regions, as for
     * {@link #fori}; eagerly the loop runs at once, inside {@code @Compile} the condition is tested at run time.
     * Forward mode ({@link #jvp}) differentiates it; reverse mode ({@link #grad}, {@link #vjp}) is an error naming
     * the line, as in JAX, since the steps to store are not known: use {@link #fori} with a bound on the steps. A
     * condition that differs from rank to rank runs a different number of steps on each, so communication in the
     * body must not depend on it.
     */
    public static <T> T whileLoop(Function<T, Tensor> cond, UnaryOperator<T> body, T init) {
        Args.notNull(cond, Weft.class, "whileLoop", "cond");
        Args.notNull(body, Weft.class, "whileLoop", "body");
        Args.notNull(init, Weft.class, "whileLoop", "init");
        return TreeControlFlow.whileLoop(cond, body, init, SourceLocation.capture());
    }

    /** {@link #fori(int, int, Tensor, BiFunction)} carrying a tree (a record of parameters, say; see {@link Trees}). */
    public static <T> T fori(int lo, int hi, T init, BiFunction<Tensor, T, T> body) {
        Args.notNull(init, Weft.class, "fori", "init");
        Args.notNull(body, Weft.class, "fori", "body");
        return TreeControlFlow.fori(lo, hi, init, body, SourceLocation.capture());
    }

    /**
     * {@code pred ? onTrue() : onFalse()} for a BOOL scalar {@code pred}; the branches must return trees (a tensor,
     * or a list, map, array or record of them) of one structure, dtypes and shapes. Both branches are traced once
     * into closed regions, as for {@link #fori}; eagerly the one {@code pred} picks then runs, inside
     * {@code @Compile} the choice is made at run time.
     */
    public static <T> T cond(Tensor pred, Supplier<T> onTrue, Supplier<T> onFalse) {
        Args.notNull(pred, Weft.class, "cond", "pred");
        Args.notNull(onTrue, Weft.class, "cond", "onTrue");
        Args.notNull(onFalse, Weft.class, "cond", "onFalse");
        return TreeControlFlow.cond(pred, onTrue, onFalse, SourceLocation.capture());
    }

    /**
     * The gradient of {@code f}, a function of one tensor returning one f32 or f64 element: {@code grad(f)(x)} has
     * {@code x}'s dtype and shape. Works eagerly and inside {@code @Compile}, and nests ({@code grad(grad(f))}).
     * Reverse mode: the primal computation runs once and keeps the values the derivative needs; a
     * {@link #fori} inside {@code f} becomes a loop forward that stores each step's such values and a loop back
     * (memory: trip count × one step's values). Integer and boolean operations pass no derivative.
     */
    public static Function<Tensor, Tensor> grad(Function<Tensor, Tensor> f) {
        Args.notNull(f, Weft.class, "grad", "f");
        return Autodiff.grad(f);
    }

    /**
     * The gradients of {@code f}, a function of several tensors returning one f32 or f64 element, with respect to
     * its arguments {@code argnums} (JAX's {@code grad(f, argnums=...)}), in that order: {@code grad(f, 0, 2)}
     * applied to {@code [a, b, c]} gives {@code [df/da, df/dc]}. Each differentiated argument must be f32 or f64;
     * the others may be anything. Same rules as {@link #grad(Function)}, from one evaluation of {@code f}.
     */
    public static Function<List<Tensor>, List<Tensor>> grad(Function<List<Tensor>, Tensor> f, int... argnums) {
        Args.notNull(f, Weft.class, "grad", "f");
        Args.notNull(argnums, Weft.class, "grad", "argnums");
        return Autodiff.grad(f, argnums);
    }

    /**
     * {@code f}'s value and gradient at one point, from one evaluation of {@code f} (JAX's
     * {@code value_and_grad}): {@code valueAndGrad(f)(x).grad()} is {@code grad(f)(x)}, and {@code value()} is
     * {@code f(x)}. Same rules as {@link #grad}.
     */
    public static Function<Tensor, ValueAndGrad> valueAndGrad(Function<Tensor, Tensor> f) {
        Args.notNull(f, Weft.class, "valueAndGrad", "f");
        return Autodiff.valueAndGrad(f);
    }

    /**
     * The gradient of {@code f} at the tree {@code at} (a record of parameters, a list or map of tensors; see
     * {@link Trees}), a tree of the same structure: each floating leaf's gradient, an integer leaf's zeros (it passes
     * no derivative). {@code f} returns one f32 or f64 element. Eager and inside {@code @Compile}; nests.
     */
    public static <T> T grad(T at, Function<T, Tensor> f) {
        Args.notNull(at, Weft.class, "grad", "at");
        Args.notNull(f, Weft.class, "grad", "f");
        return Autodiff.treeValueAndGrad(at, f, "grad").grad();
    }

    /** {@code f}'s value and gradient at the tree {@code at}, as {@link #grad(Object, Function)}'s. */
    public static <T> ValueAndGrad.Of<T> valueAndGrad(T at, Function<T, Tensor> f) {
        Args.notNull(at, Weft.class, "valueAndGrad", "at");
        Args.notNull(f, Weft.class, "valueAndGrad", "f");
        return Autodiff.treeValueAndGrad(at, f, "valueAndGrad");
    }

    /**
     * The Jacobian of {@code f} at a point by forward mode (JAX's {@code jacfwd}), of shape
     * {@code f(x).shape ++ x.shape}: one JVP per element of {@code x}, each evaluating {@code f}. For small functions
     * (at most 4096 elements of {@code x}); eager and inside {@code @Compile}.
     */
    public static Function<Tensor, Tensor> jacfwd(Function<Tensor, Tensor> f) {
        Args.notNull(f, Weft.class, "jacfwd", "f");
        return Autodiff.jacfwd(f);
    }

    /**
     * The Jacobian of {@code f} at a point by reverse mode (JAX's {@code jacrev}), of shape
     * {@code f(x).shape ++ x.shape}: one evaluation of {@code f}, one pullback per element of {@code f(x)} (at most
     * 4096).
     */
    public static Function<Tensor, Tensor> jacrev(Function<Tensor, Tensor> f) {
        Args.notNull(f, Weft.class, "jacrev", "f");
        return Autodiff.jacrev(f);
    }

    /**
     * Forward mode: {@code f}'s outputs at {@code primals} and their directional derivatives along
     * {@code tangents} (one per primal, same dtype and shape; integer inputs' tangents are ignored).
     */
    public static Jvp jvp(Function<List<Tensor>, List<Tensor>> f, List<Tensor> primals, List<Tensor> tangents) {
        Args.notNull(f, Weft.class, "jvp", "f");
        Args.noNulls(primals, Weft.class, "jvp", "primals");
        Args.noNulls(tangents, Weft.class, "jvp", "tangents");
        return Autodiff.jvp(f, List.copyOf(primals), List.copyOf(tangents));
    }

    /**
     * Reverse mode: {@code f}'s outputs at {@code primals} and its pullback ({@link Vjp#pullback}), which maps
     * cotangents of the outputs to cotangents of the inputs.
     */
    public static Vjp vjp(Function<List<Tensor>, List<Tensor>> f, List<Tensor> primals) {
        Args.notNull(f, Weft.class, "vjp", "f");
        Args.noNulls(primals, Weft.class, "vjp", "primals");
        return Autodiff.vjp(f, List.copyOf(primals));
    }

    /**
     * {@code f} with a forward-mode rule of the user's (JAX's {@code custom_jvp}): called, it runs {@code f}
     * (eagerly, or recorded inside {@code @Compile}); differentiated, by {@link #jvp} or by reverse mode
     * ({@link #grad}, {@link #vjp}, which transpose the rule's tangent computation, so it must be linear in the
     * tangents), {@code jvp} gives its outputs and their tangents instead. The rule holds inside {@link #fori} and
     * {@link #cond} bodies too, and an outer transform differentiates the rule's own code (grad of grad). Caveats:
     * only the arguments carry derivatives, so {@code f} must not use a tensor being differentiated from the
     * enclosing code (an error says so; pass it as an argument); {@code f} and the rule must not keep traced tensors
     * of one call for another.
     */
    public static Function<List<Tensor>, List<Tensor>> customJvp(Function<List<Tensor>, List<Tensor>> f,
                                                                 CustomJvpRule jvp) {
        Args.notNull(f, Weft.class, "customJvp", "f");
        Args.notNull(jvp, Weft.class, "customJvp", "jvp");
        return CustomCalls.customJvp(f, jvp, SourceLocation.capture());
    }

    /**
     * {@code f} with reverse-mode passes of the user's (JAX's {@code custom_vjp}): called, it runs {@code f};
     * under reverse mode ({@link #grad}, {@link #vjp}) {@code fwd} runs instead, returning the outputs and the
     * residuals, and the pullback calls {@code bwd(residuals, output cotangents)}, which returns one cotangent per
     * argument (of its dtype and shape; {@code null} for zero; a wrong count, shape or dtype is an error naming the
     * call's line). {@code bwd} is differentiated like any code (grad of grad). Forward mode ({@link #jvp},
     * {@link #jacfwd}) refuses it, as JAX does. Same caveats as {@link #customJvp}.
     */
    public static Function<List<Tensor>, List<Tensor>> customVjp(
            Function<List<Tensor>, List<Tensor>> f, Function<List<Tensor>, CustomVjpForward> fwd,
            BiFunction<List<Tensor>, List<Tensor>, List<Tensor>> bwd) {
        Args.notNull(f, Weft.class, "customVjp", "f");
        Args.notNull(fwd, Weft.class, "customVjp", "fwd");
        Args.notNull(bwd, Weft.class, "customVjp", "bwd");
        return CustomCalls.customVjp(f, fwd, bwd, SourceLocation.capture());
    }

    /**
     * The transpose of a linear {@code f} (JAX's {@code linear_transpose}): the returned function maps cotangents
     * of {@code f}'s outputs to those of its inputs. {@code primals} give only the inputs' dtypes and shapes.
     * {@code f} is linearised once, here, by reverse mode at zeros (so it runs once, communication included), and
     * the result may be called any number of times. A nonlinear {@code f} (an input multiplied by an input, or
     * passed to {@code exp}) is refused where that is seen; inside a {@link #fori} or {@link #cond} body it is not
     * checked.
     */
    public static Function<List<Tensor>, List<Tensor>> linearTranspose(Function<List<Tensor>, List<Tensor>> f,
                                                                       List<Tensor> primals) {
        Args.notNull(f, Weft.class, "linearTranspose", "f");
        Args.noNulls(primals, Weft.class, "linearTranspose", "primals");
        return LinearTranspose.of(f, List.copyOf(primals));
    }

    /**
     * {@code f} applied to a batch at once (JAX's {@code vmap}): {@code vmap(f, inAxes, outAxes)} applied to
     * arguments {@code xs} equals stacking {@code f} of each batch element, but runs {@code f}'s operations once, on
     * whole batches. {@code inAxes[i]} is the axis of argument {@code i} that holds the batch, or {@code -1} for an
     * argument every element shares (JAX's {@code None}); the batched arguments must agree on the batch size.
     * {@code outAxes[j]} is the axis where output {@code j} gets the batch; an output that depends on no batched
     * argument is repeated along it. {@code f} sees one element: a batched argument's {@code shape()} lacks its batch
     * axis.
     *
     * <p>As for {@link #fori}, {@code f} runs once per call, on tensors that stand for every element, so it cannot
     * read their values ({@code item()}, a Java {@code if} on data): use {@link #cond} and {@link Tensor#where}.
     * Eager and inside {@code @Compile}; it nests ({@code vmap} of {@code vmap}) and composes with {@link #grad},
     * {@link #jvp} and {@link #vjp} either way round. Every primitive has a batching rule, with these choices:
     * <ul>
     * <li>{@code fori} stays one loop (the trip count is static), a carry batched where it depends on a batched
     * value. {@code cond} on an unbatched predicate stays one cond. On a batched predicate it runs once per element,
     * in a loop over the batch, taking each element's branch only: never both branches and a select, which would
     * let a NaN or infinity of the branch not taken into the result or its gradient.</li>
     * <li>{@code dynamicSlice} and {@code dynamicUpdateSlice} at batched start indices also run per element (Weft has
     * no gather); at unbatched starts they are one operation.</li>
     * <li>Communication carries the batch in the message, one operation for every element. {@code allgather},
     * {@code reduceScatter} and {@code alltoall} join or split axis 0, so they take the batch at axis 1. A collective
     * on an unbatched operand stays unbatched: every rank must batch its operands alike (as the same program on
     * every rank does). A point-to-point message ({@code send}/{@code recv}, {@code isend}/{@code irecv},
     * {@code sendrecv}) always carries the batch, an unbatched tensor sent repeated along it, so both ends must be
     * inside a {@code vmap} of one batch size, and a request must be waited inside the {@code vmap} that started it.
     * A custom reduce op is applied to whole batches (it must be elementwise anyway).</li>
     * </ul>
     *
     * @throws ShapeException naming the line of the call for a batch axis out of range (here, or when the result is
     *                        applied), batched arguments of different sizes, no batched argument, or an argument or
     *                        output count that differs from {@code inAxes} or {@code outAxes}
     */
    public static Function<List<Tensor>, List<Tensor>> vmap(Function<List<Tensor>, List<Tensor>> f, int[] inAxes,
                                                          int[] outAxes) {
        Args.notNull(f, Weft.class, "vmap", "f");
        Args.notNull(inAxes, Weft.class, "vmap", "inAxes");
        Args.notNull(outAxes, Weft.class, "vmap", "outAxes");
        return Vmap.vmap(f, inAxes, outAxes);
    }

    /** {@link #vmap(Function, int[], int[])} of a function of one tensor, batched along axis 0 in and out. */
    public static Function<Tensor, Tensor> vmap(Function<Tensor, Tensor> f) {
        Args.notNull(f, Weft.class, "vmap", "f");
        Function<List<Tensor>, List<Tensor>> batched = Vmap.vmap(
                xs -> Collections.singletonList(f.apply(xs.getFirst())), new int[] {0}, new int[] {0});
        return x -> batched.apply(List.of(Args.notNull(x, Weft.class, "vmap", "x"))).getFirst();
    }

    /**
     * Opens a {@link Scope} on this thread: the tensors made on it until the scope closes are freed when it closes,
     * but those passed to {@link Scope#keep}. Use it with try-with-resources:
     * {@code try (Scope s = Weft.scope()) { ... result = s.keep(y); }}.
     */
    public static Scope scope() {
        return Scope.open(SourceLocation.capture());
    }

    /**
     * Installs the Weft agent into this JVM now. Optional: {@code bin/weft} passes it with -javaagent, and
     * otherwise it attaches itself when the program makes its first {@link Tensor} or {@code Comm}; calling this
     * first thing in {@code main} also covers a {@code @Compile} method whose body would make the first tensor.
     */
    public static void install() {
        Runtime.INSTANCE.install();
    }

    /**
     * Traces and lowers {@code owner.method} for the CPU target without running it. {@code args} are as for a
     * call, with {@link TensorSpec} standing for a tensor.
     */
    public static LoweredModule lower(Class<?> owner, String method, Object... args) {
        return lower("cpu", owner, method, args);
    }

    /** {@link #lower(Class, String, Object...)} for a named target ({@code "cpu"} or {@code "gpu"}). */
    public static LoweredModule lower(String target, Class<?> owner, String method, Object... args) {
        Args.notNull(target, Weft.class, "lower", "target");
        Args.notNull(owner, Weft.class, "lower", "owner");
        Args.notNull(method, Weft.class, "lower", "method");
        Args.notNull(args, Weft.class, "lower", "args");
        return Runtime.INSTANCE.lower(target, owner, method, args);
    }
}
