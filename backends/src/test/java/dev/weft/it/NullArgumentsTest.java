package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.CustomJvpRule;
import dev.weft.DType;
import dev.weft.Jvp;
import dev.weft.NullArgumentException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.nn.Nn;
import dev.weft.spi.CommHandle;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every public method of {@link Tensor}, {@link Comm}, {@link Weft} and {@link Nn}, found by reflection so that a new one cannot
 * be missed, given {@code null} for each of its reference parameters in turn (the others valid), eagerly and inside
 * {@code @Compile}: each must raise a {@link NullArgumentException} naming the method and the parameter at this
 * file's line, never a bare {@link NullPointerException}.
 */
class NullArgumentsTest {
    private static final List<Class<?>> API = List.of(Tensor.class, Comm.class, Weft.class, Nn.class);
    /** What the traced run found wrong; written while tracing. */
    private static final List<String> TRACED_PROBLEMS = new ArrayList<>();
    private static int tracedCalls;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Test
    void everyPublicMethodRejectsEachNullArgumentEagerly() {
        List<String> problems = new ArrayList<>();
        int calls = callWithNulls(Tensor.of(new float[] {1, 2}), Comm.world(), problems);
        assertThat(problems).isEmpty();
        assertThat(calls).as("calls made").isGreaterThan(70);
    }

    @Test
    void everyPublicMethodRejectsEachNullArgumentWhileTracing() {
        Tensor x = Tensor.of(new float[] {1, 2});
        assertThat(tracedChecks(Comm.world(), x).toFloatArray()).containsExactly(1, 2);
        assertThat(TRACED_PROBLEMS).isEmpty();
        assertThat(tracedCalls).as("calls made").isGreaterThan(70);
    }

    @Compile
    static Tensor tracedChecks(Comm c, Tensor x) {
        assertThat(x.isTraced()).isTrue();
        tracedCalls = callWithNulls(x, c, TRACED_PROBLEMS);
        return x;
    }

    @Test
    void tensorOfNullNamesTheParameterAndTheLine() {
        assertThatThrownBy(() -> Tensor.of((float[]) null)).isInstanceOf(NullArgumentException.class)
                .hasMessage("NullArgumentsTest.java:" + (lineOf() - 1) + ": Tensor.of: argument 'data' is null");
    }

    @Test
    void nullElementsOfListAndArrayArgumentsAreNamed() {
        Tensor x = Tensor.of(new double[] {1});
        Comm world = Comm.world();
        assertThatThrownBy(() -> Tensor.concat(0, x, null)).isInstanceOf(NullArgumentException.class)
                .hasMessageEndingWith(": Tensor.concat: parts[1] is null");
        assertThatThrownBy(() -> Weft.fori(0, 2, Arrays.asList(x, null), (i, c) -> c))
                .isInstanceOf(NullArgumentException.class).hasMessageEndingWith(": Weft.fori: init.get(1) is null");
        assertThatThrownBy(() -> world.waitAll((Request) null)).isInstanceOf(NullArgumentException.class)
                .hasMessageEndingWith(": Comm.waitAll: requests[0] is null");
    }

    /**
     * Calls every public method of {@link #API} declared there once per reference parameter, that one null, on
     * {@code x} or {@code comm}; adds what went wrong to {@code problems} and returns how many calls it made.
     */
    private static int callWithNulls(Tensor x, Comm comm, List<String> problems) {
        int calls = 0;
        for (Class<?> owner : API) {
            for (Method m : owner.getMethods()) {
                if (m.getDeclaringClass() != owner || m.getName().equals("equals")) {
                    continue;
                }
                Class<?>[] types = m.getParameterTypes();
                for (int i = 0; i < types.length; i++) {
                    if (types[i].isPrimitive()) {
                        continue;
                    }
                    Object[] args = new Object[types.length];
                    for (int j = 0; j < types.length; j++) {
                        args[j] = j == i ? null : sample(types[j], x, comm);
                    }
                    Object receiver = Modifier.isStatic(m.getModifiers()) ? null : owner == Tensor.class ? x : comm;
                    calls++;
                    String problem = problem(m, i, receiver, args);
                    if (problem != null) {
                        problems.add(problem);
                    }
                }
            }
        }
        return calls;
    }

    /** What is wrong with calling {@code m} with {@code args}, whose {@code i}-th is null, or null if nothing. */
    private static String problem(Method m, int i, Object receiver, Object[] args) {
        String call = m.getDeclaringClass().getSimpleName() + "." + m.getName();
        String what = m + " with argument " + i + " null";
        try {
            m.invoke(receiver, args);
            return what + " returned normally";
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            if (!(t instanceof NullArgumentException n)) {
                return what + " threw " + t;
            }
            if (!n.location().file().equals("NullArgumentsTest.java")
                    || !n.getMessage().matches("NullArgumentsTest\\.java:\\d+: " + call.replace(".", "\\.")
                    + ": argument '\\w+' is null")) {
                return what + " threw " + n.getMessage();
            }
            return null;
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }

    /** A valid argument of {@code type}; a type without one fails, so that a new kind of parameter is added here. */
    private static Object sample(Class<?> type, Tensor x, Comm comm) {
        if (type == int.class) {
            return 0;
        }
        if (type == long.class) {
            return 2L;
        }
        if (type == double.class) {
            return 1.0;
        }
        if (type == Tensor.class) {
            return x;
        }
        if (type == Tensor[].class) {
            return new Tensor[] {x};
        }
        if (type == List.class) {
            return List.of(x);
        }
        if (type == DType.class) {
            return DType.F32;
        }
        if (type == long[].class) {
            return new long[] {2};
        }
        if (type == int[].class) {
            return new int[0];
        }
        if (type == float[].class) {
            return new float[] {1, 2};
        }
        if (type == double[].class) {
            return new double[] {1, 2};
        }
        if (type == boolean[].class) {
            return new boolean[] {true, false};
        }
        if (type == Comm.class) {
            return comm;
        }
        if (type == CommHandle.class) {
            return comm.handle();
        }
        if (type == ReduceOp.class) {
            return ReduceOp.SUM;
        }
        if (type == Request[].class) {
            return new Request[0];
        }
        if (type == Function.class) {
            return Function.identity();
        }
        if (type == BiFunction.class) {
            return (BiFunction<Object, Object, Object>) (i, carry) -> carry;
        }
        if (type == Supplier.class) {
            return (Supplier<Tensor>) () -> x;
        }
        if (type == Object.class) {
            return x;
        }
        if (type == UnaryOperator.class) {
            return UnaryOperator.identity();
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == Class.class) {
            return NullArgumentsTest.class;
        }
        if (type == CustomJvpRule.class) {
            return (CustomJvpRule) (p, t) -> new Jvp(p, t);
        }
        if (type == String.class) {
            return "cpu";
        }
        if (type == Object[].class) {
            return new Object[0];
        }
        throw new AssertionError("no sample argument of " + type + ": add one to NullArgumentsTest.sample");
    }

    /** The caller's line. */
    private static int lineOf() {
        return StackWalker.getInstance().walk(s -> s.skip(1).findFirst()).orElseThrow().getLineNumber();
    }
}
