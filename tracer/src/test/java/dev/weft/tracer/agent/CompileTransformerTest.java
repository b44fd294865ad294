package dev.weft.tracer.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/** The byte search that spares the agent from parsing classes without {@code @Compile} methods. */
class CompileTransformerTest {
    static final class Annotated {
        @Compile
        static Tensor twice(Tensor x) {
            return x.add(x);
        }
    }

    static final class Plain {
        static Tensor twice(Tensor x) {
            return x.add(x);
        }
    }

    @Test
    void onlyClassFilesNamingTheAnnotationArePassedOn() throws IOException {
        assertThat(CompileTransformer.mayDeclareCompile(classFile(Annotated.class))).isTrue();
        assertThat(CompileTransformer.mayDeclareCompile(classFile(Plain.class))).isFalse();
        assertThat(CompileTransformer.mayDeclareCompile(classFile(String.class))).isFalse();
        assertThat(CompileTransformer.mayDeclareCompile(classFile(CompileTransformer.class))).isFalse();
    }

    @Test
    void theAnnotationsDescriptorAtTheVeryEndIsFound() {
        byte[] bytes = "xxLdev/weft/Compile;".getBytes();
        assertThat(CompileTransformer.mayDeclareCompile(bytes)).isTrue();
        assertThat(CompileTransformer.mayDeclareCompile(new byte[] {'L', 'd'})).isFalse();
    }

    private static byte[] classFile(Class<?> type) throws IOException {
        try (InputStream in = type.getResourceAsStream("/" + type.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }
}
