package dev.weft.testing;

import dev.weft.comm.Comm;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/**
 * The JUnit 5 extension behind {@link Ranks} (which registers it): one test template invocation per rank count,
 * whose method call is replaced by running the method on that many fake ranks through {@link RankRunner}. A
 * parameter of type {@code Comm} receives each rank's world. {@code @BeforeEach}/{@code @AfterEach} methods run
 * once per invocation on the test thread, not on the ranks.
 */
public final class RanksExtension implements TestTemplateInvocationContextProvider {
    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        return context.getTestMethod().map(m -> m.isAnnotationPresent(Ranks.class)).orElse(false);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        int[] counts = context.getRequiredTestMethod().getAnnotation(Ranks.class).value();
        return Arrays.stream(counts).mapToObj(RankCount::new);
    }

    /** One invocation: the method body on {@code n} ranks. */
    private record RankCount(int n) implements TestTemplateInvocationContext {
        @Override
        public String getDisplayName(int invocationIndex) {
            return n + (n == 1 ? " rank" : " ranks");
        }

        @Override
        public List<Extension> getAdditionalExtensions() {
            return List.of(new CommParameter(), new OnRanks(n));
        }
    }

    /** Resolves a {@code Comm} parameter to a placeholder; {@link OnRanks} passes each rank its own world. */
    private static final class CommParameter implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext p, ExtensionContext context) {
            return p.getParameter().getType() == Comm.class;
        }

        @Override
        public Object resolveParameter(ParameterContext p, ExtensionContext context) {
            return null;
        }
    }

    /** Replaces the method call with one call per fake rank. */
    private record OnRanks(int n) implements InvocationInterceptor {
        @Override
        public void interceptTestTemplateMethod(Invocation<Void> invocation,
                ReflectiveInvocationContext<Method> call, ExtensionContext context) {
            invocation.skip();
            Method m = call.getExecutable();
            m.setAccessible(true);
            Object target = call.getTarget().orElse(null);
            List<Object> template = call.getArguments();
            RankRunner.run(n, world -> {
                Object[] args = template.toArray();
                Class<?>[] types = m.getParameterTypes();
                for (int i = 0; i < args.length; i++) {
                    if (types[i] == Comm.class) {
                        args[i] = world;
                    }
                }
                try {
                    m.invoke(target, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
        }
    }
}
