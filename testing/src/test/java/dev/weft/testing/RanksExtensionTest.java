package dev.weft.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

/** {@link RanksExtension}'s invocations, one per rank count, named by it. */
class RanksExtensionTest {
    /** Holds a template outside the test class, so that JUnit does not run it (this module has no ranks). */
    static final class Templates {
        @Ranks({1, 2, 3})
        void onRanks() {
        }

        void plain() {
        }
    }

    @Test
    void eachInvocationIsNamedByItsRankCount() throws NoSuchMethodException {
        ExtensionContext context = contextOf(Templates.class.getDeclaredMethod("onRanks"));
        RanksExtension extension = new RanksExtension();
        assertThat(extension.supportsTestTemplate(context)).isTrue();
        assertThat(extension.provideTestTemplateInvocationContexts(context).toList())
                .extracting(c -> c.getDisplayName(1)).containsExactly("1 rank", "2 ranks", "3 ranks");
    }

    @Test
    void aMethodWithoutRanksIsNotItsTemplate() throws NoSuchMethodException {
        ExtensionContext context = contextOf(Templates.class.getDeclaredMethod("plain"));
        assertThat(new RanksExtension().supportsTestTemplate(context)).isFalse();
    }

    /** An extension context that knows only its test method: all {@link RanksExtension} asks before a run. */
    private static ExtensionContext contextOf(Method method) {
        return (ExtensionContext) Proxy.newProxyInstance(ExtensionContext.class.getClassLoader(),
                new Class<?>[] {ExtensionContext.class}, (proxy, m, args) -> switch (m.getName()) {
                    case "getTestMethod" -> Optional.of(method);
                    case "getRequiredTestMethod" -> method;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
