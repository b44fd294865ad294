package dev.weft.tracer;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.TensorSpec;
import dev.weft.TracedValueException;
import dev.weft.WeftException;
import dev.weft.graph.Graph;
import dev.weft.graph.Var;
import dev.weft.shard.Partitioner;
import dev.weft.shard.ShardAgreement;
import dev.weft.shard.Sharding;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBinding;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Setting;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Where calls of {@code @Compile} methods arrive (from the agent's advice), and the tracing of such methods for
 * lowering without running them.
 *
 * <p>A call outside any trace is keyed by the method, the receiver's identity (instance methods) and its
 * classified arguments: a {@link Tensor} by its dtype and shape (it becomes a graph input), any other argument by
 * its {@link ArgumentKind}'s key. The first call of a key traces the method, compiles the graph with the
 * {@link CompilePipeline} found by {@link ServiceLoader} for the target named by the system property
 * {@code weft.target} ({@link Setting#TARGET}; default: the pipeline's {@link CompilePipeline#defaultTarget()}, {@code cpu}) and caches the executable; every call then runs the cached
 * executable on its tensors. Each method has its own {@link CompileCache}, which keeps at most
 * 64 executables by default ({@link Setting#COMPILE_CACHE}: system property {@code weft.compileCache.size} or
 * environment variable {@code WEFT_COMPILE_CACHE}) and evicts the least recently used beyond that; fake ranks
 * share it, each rank's executable of a signature being an entry of its own. Calls made while this thread is
 * tracing run the body, so nested {@code @Compile} methods are inlined into the caller's graph. Thread-safe:
 * traces are per thread; two threads missing the same key may both trace, and one executable is kept.
 */
public final class CompileGate {
    /** What {@link #enter} returns for a void method whose executable ran. */
    private static final Object VOID_DONE = new Object();
    private static final ClassValue<Map<String, InterceptedMethod>> METHODS = new ClassValue<>() {
        @Override
        protected Map<String, InterceptedMethod> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };

    private static volatile CompilePipeline pipeline;

    private CompileGate() {
    }

    /**
     * Entry advice of the {@code @Compile} method of {@code type} with {@code signature} (its name followed by
     * its JVM descriptor). Returns {@code null} when the body must run (this thread is tracing); otherwise
     * compiles if needed, runs the executable and returns the method's result ({@code Tensor}, {@code Tensor[]}
     * or {@code List<Tensor>}), or a non-null marker for a void method: the body is then skipped.
     */
    public static Object enter(Class<?> type, String signature, Object receiver, Object[] args) {
        if (Interpreters.isTracing()) {
            return null;
        }
        InterceptedMethod method = METHODS.get(type)
                .computeIfAbsent(signature, s -> InterceptedMethod.resolve(type, s));
        Object[] key = new Object[args.length];
        List<Tensor> tensors = new ArrayList<>(args.length);
        for (int i = 0; i < args.length; i++) {
            key[i] = classify(method, i, args[i], tensors);
        }
        String target = Setting.TARGET.text(); // read on every call, so that it can change
        CallKey callKey = new CallKey(method.isStatic() ? null : receiver, CommBinding.bound(),
                target != null ? target : pipeline().defaultTarget(), Arrays.asList(key));
        Executable exe = method.executables().get(callKey);
        if (exe == null) {
            exe = compile(method, callKey, receiver, args);
        }
        if (exe instanceof ScalarFamily family) {
            double[] values = scalarValues(method, args);
            exe = family.select(values);
            tensors.addAll(family.inputs(values));
        }
        if (exe instanceof StructuredExecutable tree) {
            return tree.result(tensors);
        }
        List<Tensor> out = exe.run(tensors);
        return method.result() == ResultKind.VOID ? VOID_DONE : out.getFirst();
    }

    /**
     * Traces the method {@code methodName} of {@code owner} without running it, for lowering. {@code args} are as
     * for a call, with {@link TensorSpec} (or a concrete {@link Tensor}) standing for each tensor argument. The
     * method is chosen by name and number of parameters and must be static.
     *
     * @throws WeftException if no method or several match, or an argument is not accepted
     */
    public static Graph trace(Class<?> owner, String methodName, Object[] args) {
        List<Method> candidates = Arrays.stream(owner.getDeclaredMethods())
                .filter(m -> m.getName().equals(methodName) && m.getParameterCount() == args.length
                        && !m.isSynthetic())
                .toList();
        if (candidates.size() != 1) {
            throw new WeftException(SourceLocation.capture(), (candidates.isEmpty() ? "no method " : "several methods ")
                    + owner.getSimpleName() + "." + methodName + " with " + args.length + " parameters"
                    + (candidates.isEmpty() ? "" : ": " + candidates.stream().map(InterceptedMethod::describe).toList()));
        }
        InterceptedMethod method = InterceptedMethod.of(candidates.getFirst(), SourceLocation.capture());
        if (!method.isStatic()) {
            throw new WeftException(SourceLocation.capture(), method + " is an instance method; only static methods"
                    + " can be traced without a call");
        }
        Object[] traceArgs = args.clone();
        List<Aval> avals = new ArrayList<>();
        List<Integer> slots = new ArrayList<>();
        List<Sharding> shardings = new ArrayList<>();
        Class<?>[] types = method.method().getParameterTypes();
        for (int i = 0; i < args.length; i++) {
            boolean tensorArg = args[i] instanceof TensorSpec || args[i] instanceof Tensor;
            if (tensorArg != (types[i] == Tensor.class)) {
                throw new WeftException(SourceLocation.capture(), "Weft.lower: argument " + i + " of " + method
                        + " is " + (args[i] == null ? "null" : args[i] + " (" + args[i].getClass().getSimpleName()
                        + ")") + " for a parameter of type " + types[i].getSimpleName()
                        + "; pass TensorSpec.of(dtype, shape) for each Tensor parameter and the value itself for"
                        + " any other");
            }
            if (args[i] instanceof TensorSpec spec) {
                avals.add(spec.aval());
                slots.add(i);
                shardings.add(null);
            } else if (args[i] instanceof Tensor t) {
                avals.add(avalOf(t));
                slots.add(i);
                shardings.add(Sharding.of(t));
            } else {
                traceArgs[i] = kindOf(method, i, args[i]).traceValue(args[i]);
            }
        }
        Graph graph = traceCall(method, null, traceArgs, slots.stream().map(i -> new TreeSlot(i, null)).toList(),
                avals, new Trees.Structure[1]);
        return Partitioner.needed(graph.body(), shardings) ? partition(graph, shardings).graph() : graph;
    }

    /**
     * The key part of one argument; a tensor, or a tree's leaves, are also added to {@code tensors}. A traced
     * scalar's part is its dtype: its value is an input of the program ({@link ScalarFamily}).
     */
    private static Object classify(InterceptedMethod method, int index, Object arg, List<Tensor> tensors) {
        if (arg instanceof Tensor t) {
            return classifyTensor(method, index, -1, t, tensors);
        }
        if (method.scalar(index) != null && arg != null) {
            return new ScalarKey(method.scalar(index));
        }
        ArgumentKind kind = ArgumentKinds.of(arg);
        if (kind == null && Trees.isTree(arg)) {
            List<Tensor> leaves = new ArrayList<>();
            Trees.Structure s = Trees.structure(arg, leaves, () -> "argument " + index + " of " + method,
                    () -> callerOf(method));
            List<Object> keys = new ArrayList<>(leaves.size());
            for (int k = 0; k < leaves.size(); k++) {
                keys.add(classifyTensor(method, index, k, leaves.get(k), tensors));
            }
            return new TreeArgument(s, keys);
        }
        return kindOf(method, index, arg).key(arg);
    }

    /**
     * The key of tensor argument {@code index} (or its leaf {@code leaf}; -1: the argument is the tensor), which is
     * added to {@code tensors}.
     */
    private static Object classifyTensor(InterceptedMethod method, int index, int leaf, Tensor t,
                                         List<Tensor> tensors) {
        Sharding sharding = Sharding.of(t);
        if (sharding != null) {
            tensors.add(Sharding.localBlock(t));
            return new ShardedArgument(avalOf(t), sharding);
        }
        if (t.isTraced()) {
            throw new TracedValueException(callerOf(method), tensorName(index, leaf) + " of " + method
                    + " is a traced tensor whose trace has ended; return tensors from @Compile methods instead"
                    + " of keeping them");
        }
        String unusable = TensorAccess.unusable(t);
        if (unusable != null) {
            throw new WeftException(callerOf(method), tensorName(index, leaf) + " of " + method + ": " + unusable);
        }
        tensors.add(t);
        return avalOf(t);
    }

    /** Names a tensor argument or leaf for a message: built only for one, not at every call. */
    private static String tensorName(int index, int leaf) {
        return (leaf < 0 ? "" : "leaf " + leaf + " of ") + "argument " + index;
    }

    private static ArgumentKind kindOf(InterceptedMethod method, int index, Object arg) {
        ArgumentKind kind = ArgumentKinds.of(arg);
        if (kind == null) {
            throw new WeftException(callerOf(method), "argument " + index + " of " + method + " is "
                    + (arg == null ? "null" : "a " + arg.getClass().getName()) + ", which a @Compile method cannot"
                    + " take; it accepts " + ArgumentKinds.accepted());
        }
        return kind;
    }

    /** Traces and compiles the call of {@code method} with {@code key}; returns the executable cached for it. */
    private static Executable compile(InterceptedMethod method, CallKey key, Object receiver, Object[] args) {
        Object[] traceArgs = args.clone();
        List<Aval> avals = new ArrayList<>();
        List<Sharding> shardings = new ArrayList<>();
        List<TreeSlot> trees = new ArrayList<>();
        List<Integer> scalarSlots = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            Object k = key.args().get(i);
            if (k instanceof ScalarKey) {
                scalarSlots.add(i);
                continue;
            }
            List<Object> leafKeys = args[i] instanceof Tensor ? List.of(k)
                    : k instanceof TreeArgument tree ? tree.leaves() : null;
            if (leafKeys == null) {
                traceArgs[i] = ArgumentKinds.of(args[i]).traceValue(args[i]);
                continue;
            }
            for (Object leaf : leafKeys) {
                avals.add(leaf instanceof ShardedArgument s ? s.global() : (Aval) leaf);
                shardings.add(leaf instanceof ShardedArgument s ? s.sharding() : null);
            }
            trees.add(new TreeSlot(i, k instanceof TreeArgument tree ? tree.structure() : null));
        }
        if (scalarSlots.isEmpty()) {
            method.recompiles().compiled(method, key.world(), key.args(), callerOf(method), Optional.empty());
        }
        // The first call of each key: ranks whose global shapes differ get different keys, so none runs unchecked.
        ShardAgreement.check("the sharded arguments of " + method, avals, shardings, callerOf(method));
        if (!scalarSlots.isEmpty()) {
            return method.executables().add(key, scalarFamily(method, key, receiver, args, traceArgs, trees, avals,
                    shardings, scalarSlots));
        }
        Trees.Structure[] result = new Trees.Structure[1];
        Graph graph = traceCall(method, receiver, traceArgs, trees, avals, result);
        return method.executables().add(key, build(graph, result[0], shardings, key.target()));
    }

    /** The executable of {@code graph}, partitioned when its arguments are sharded, rebuilding a tree result. */
    private static Executable build(Graph graph, Trees.Structure result, List<Sharding> shardings, String target) {
        Executable exe;
        if (!Partitioner.needed(graph.body(), shardings)) {
            exe = pipeline().compile(graph, target);
        } else {
            Partitioned p = partition(graph, shardings);
            List<Aval> globals = graph.body().results().stream().map(Var::aval).toList();
            exe = new PartitionedExecutable(pipeline().compile(p.graph(), target), p.shardings(), globals);
        }
        return result != null ? new StructuredExecutable(exe, result) : exe;
    }

    /**
     * The family of programs of a call key with traced scalars (the arguments at {@code slots}), its first program
     * compiled for this call's values. A later program is a recompile, noted with the values that caused it.
     */
    private static ScalarFamily scalarFamily(InterceptedMethod method, CallKey key, Object receiver, Object[] args,
                                             Object[] traceArgs, List<TreeSlot> trees, List<Aval> avals,
                                             List<Sharding> shardings, List<Integer> slots) {
        List<Sharding> withScalars = new ArrayList<>(shardings);
        slots.forEach(s -> withScalars.add(null));
        ScalarFamily family = new ScalarFamily(slots.stream().map(method::scalar).toList(), values -> {
            Object[] call = traceArgs.clone();
            for (int k = 0; k < slots.size(); k++) {
                int i = slots.get(k);
                call[i] = method.scalar(i) == DType.F32 ? (Object) (float) values[k] : (Object) values[k];
            }
            Trees.Structure[] result = new Trees.Structure[1];
            Graph g = traceCall(method, receiver, call, trees, avals, result);
            return new ScalarFamily.Trace(g, result[0]);
        }, (graph, result, values, changedAt) -> {
            List<Object> keys = new ArrayList<>(key.args());
            for (int k = 0; k < slots.size(); k++) {
                keys.set(slots.get(k), values[k]);
            }
            method.recompiles().compiled(method, key.world(), keys, callerOf(method), changedAt);
            return build(graph, result, withScalars, key.target());
        });
        family.select(scalarValues(method, args));
        return family;
    }

    /** The values of the traced-scalar arguments of a call, in order. */
    private static double[] scalarValues(InterceptedMethod method, Object[] args) {
        double[] values = new double[args.length];
        int n = 0;
        for (int i = 0; i < args.length; i++) {
            if (method.scalar(i) != null) {
                values[n++] = ((Number) args[i]).doubleValue();
            }
        }
        return Arrays.copyOf(values, n);
    }

    /** The key part of a traced scalar: its dtype, not its value. */
    private record ScalarKey(DType dtype) {
        @Override
        public String toString() {
            return "a traced " + dtype.specName() + " scalar";
        }
    }

    /**
     * {@code graph}, traced on global arrays with arguments laid out by {@code shardings} ({@code null}: plain),
     * as this rank's program on its blocks ({@link Partitioner}), with the shardings of its results. The program is
     * specialised to this rank, so it counts as reading the mesh's communicator.
     */
    private static Partitioned partition(Graph graph, List<Sharding> shardings) {
        List<Aval> locals = new ArrayList<>(shardings.size());
        for (int k = 0; k < shardings.size(); k++) {
            locals.add(Partitioner.localAval(graph.body().params().get(k).aval(), shardings.get(k)));
        }
        Partitioner.Result[] result = new Partitioner.Result[1];
        Graph local = Tracer.trace(graph.name(), locals, blocks -> {
            result[0] = Partitioner.partition(graph.body(), blocks, shardings);
            return result[0].locals();
        });
        Set<CommHandle> read = Collections.newSetFromMap(new IdentityHashMap<>());
        List<CommHandle> commsRead = new ArrayList<>();
        for (CommHandle c : Stream.of(graph.commsRead(), local.commsRead(),
                List.of(result[0].mesh().comm().handle())).flatMap(List::stream).toList()) {
            if (read.add(c)) {
                commsRead.add(c);
            }
        }
        return new Partitioned(new Graph(local.name(), local.body(), commsRead), result[0].shardings());
    }

    private record Partitioned(Graph graph, List<Sharding> shardings) {
    }

    /** Argument {@code arg}: a tensor ({@code structure} {@code null}) or a tree of that structure. */
    private record TreeSlot(int arg, Trees.Structure structure) {
    }

    /**
     * Runs {@code method} once with traced tensors of {@code avals}, taken in order by the tensor and tree arguments
     * {@code trees} names (a tree takes as many as it has leaves). A tree result's structure goes to
     * {@code result[0]}.
     */
    private static Graph traceCall(InterceptedMethod method, Object receiver, Object[] args, List<TreeSlot> trees,
                                   List<Aval> avals, Trees.Structure[] result) {
        String name = method.method().getDeclaringClass().getSimpleName() + "." + method.method().getName();
        return Tracer.trace(name, avals, traced -> {
            Object[] callArgs = args.clone();
            int k = 0;
            for (TreeSlot t : trees) {
                int n = t.structure() == null ? 1 : t.structure().leaves();
                callArgs[t.arg()] = t.structure() == null ? traced.get(k) : t.structure().rebuild(traced.subList(k,
                        k + n));
                k += n;
            }
            ResultKind.Flat flat = method.flatten(method.invoke(receiver, callArgs), callerOf(method));
            result[0] = flat.structure();
            return flat.tensors();
        });
    }

    private static CompilePipeline pipeline() {
        CompilePipeline p = pipeline;
        if (p == null) {
            p = ServiceLoader.load(CompilePipeline.class).findFirst()
                    .orElseThrow(() -> new WeftException(SourceLocation.UNKNOWN,
                            "no compile pipeline on the class path: add dev.weft:weft-backends"));
            pipeline = p;
        }
        return p;
    }

    private static SourceLocation callerOf(InterceptedMethod method) {
        return CallerLocation.of(method.method().getDeclaringClass(), method.method().getName());
    }

    private static Aval avalOf(Tensor t) {
        return TensorAccess.aval(t);
    }

    /**
     * The key of a call in its method's cache: receiver (by identity; {@code null} for static methods), the world
     * bound to this thread (fake ranks: a body that asks {@code Comm.world()} for its rank is specialised per
     * rank), the target, argument keys.
     */
    private record CallKey(Object receiver, Object world, String target, List<Object> args) {
        @Override
        public boolean equals(Object o) {
            return o instanceof CallKey k && k.receiver == receiver && k.world == world
                    && k.target.equals(target) && k.args.equals(args);
        }

        @Override
        public int hashCode() {
            return ((System.identityHashCode(receiver) * 31 + System.identityHashCode(world)) * 31
                    + target.hashCode()) * 31 + args.hashCode();
        }
    }
}
