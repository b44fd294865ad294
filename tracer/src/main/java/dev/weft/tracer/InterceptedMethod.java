package dev.weft.tracer;

import dev.weft.DType;
import dev.weft.Static;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A method the gate traces: how to call it reflectively, what it returns, and the executables compiled for it.
 * Compared by identity.
 */
final class InterceptedMethod {
    private final Method method;
    private final MethodHandle handle;
    private final ResultKind result;
    private final CompileCache executables = new CompileCache();
    private final Recompiles recompiles = new Recompiles();

    /** Per parameter: its dtype when it is a traced scalar (double or float, boxed or not, without @Static). */
    private final DType[] scalars;

    private InterceptedMethod(Method method, MethodHandle handle, ResultKind result) {
        this.method = method;
        this.handle = handle;
        this.result = result;
        Class<?>[] types = method.getParameterTypes();
        this.scalars = new DType[types.length];
        for (int i = 0; i < types.length; i++) {
            boolean isStatic = method.getParameters()[i].isAnnotationPresent(Static.class);
            if (!isStatic && (types[i] == double.class || types[i] == Double.class)) {
                scalars[i] = DType.F64;
            } else if (!isStatic && (types[i] == float.class || types[i] == Float.class)) {
                scalars[i] = DType.F32;
            }
        }
    }

    /** The dtype of parameter {@code i} if it is a traced scalar, else {@code null}. */
    DType scalar(int i) {
        return scalars[i];
    }

    /** The method of {@code type} with {@code signature} (name followed by JVM descriptor). */
    static InterceptedMethod resolve(Class<?> type, String signature) {
        for (Method m : type.getDeclaredMethods()) {
            String sig = m.getName()
                    + MethodType.methodType(m.getReturnType(), m.getParameterTypes()).toMethodDescriptorString();
            if (sig.equals(signature)) {
                return of(m, CallerLocation.of(type, m.getName()));
            }
        }
        throw new IllegalStateException("no method " + signature + " in " + type.getName());
    }

    /** Wraps {@code m}; an unsupported return type is an error at {@code where}. */
    static InterceptedMethod of(Method m, SourceLocation where) {
        ResultKind kind = ResultKind.of(m.getReturnType());
        if (kind == null) {
            throw new WeftException(where, describe(m) + " returns " + m.getGenericReturnType().getTypeName()
                    + "; a traced method returns " + ResultKind.SUPPORTED);
        }
        try {
            m.setAccessible(true);
            return new InterceptedMethod(m, MethodHandles.lookup().unreflect(m), kind);
        } catch (IllegalAccessException | RuntimeException e) {
            throw new WeftException(where, "cannot call " + describe(m) + ": " + e.getMessage(), e);
        }
    }

    Method method() {
        return method;
    }

    boolean isStatic() {
        return Modifier.isStatic(method.getModifiers());
    }

    ResultKind result() {
        return result;
    }

    CompileCache executables() {
        return executables;
    }

    Recompiles recompiles() {
        return recompiles;
    }

    /** Calls the method; its exceptions propagate unchanged. */
    Object invoke(Object receiver, Object[] args) {
        List<Object> all = new ArrayList<>(args.length + 1);
        if (!isStatic()) {
            all.add(receiver);
        }
        all.addAll(Arrays.asList(args));
        try {
            return handle.invokeWithArguments(all);
        } catch (Throwable t) {
            throw InterceptedMethod.<RuntimeException>sneaky(t);
        }
    }

    /** The tensors the traced call returned, with their structure; anything else is an error at {@code where}. */
    ResultKind.Flat flatten(Object value, SourceLocation where) {
        ResultKind.Flat out = result.flatten(value);
        if (out == null) {
            String what = value == null ? "null" : "a " + value.getClass().getName();
            throw new WeftException(where, describe(method) + " returned " + what + "; a traced method returns "
                    + ResultKind.SUPPORTED);
        }
        return out;
    }

    /** Like {@code Heat.step(Tensor, int)}. */
    static String describe(Method m) {
        return m.getDeclaringClass().getSimpleName() + "." + m.getName() + Arrays.stream(m.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
    }

    @Override
    public String toString() {
        return describe(method);
    }

    /** Rethrows a checked exception that the method declares, without wrapping it. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
