package dev.weft.tracer.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeElement;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LineNumber;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The byte search that spares the agent from parsing classes without {@code @Compile} methods, and the gate's line.
 */
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

    /**
     * The gate runs at the line of the method's first statement, so a frame stopped in it (under
     * {@code CompileGate.enter}) has that line rather than none.
     */
    @Test
    void theGateHasTheLineOfTheMethodsFirstStatement() throws IOException {
        byte[] original = classFile(Annotated.class);
        byte[] gated = new CompileTransformer().transform(Annotated.class.getClassLoader(),
                Annotated.class.getName().replace('.', '/'), null, null, original);
        assertThat(gated).isNotNull();
        List<CodeElement> code = twiceCode(gated);
        int gate = code.indexOf(code.stream().filter(e -> e instanceof InvokeInstruction i
                && i.name().equalsString("enter")).findFirst().orElseThrow());
        List<Integer> linesBeforeGate = lines(code.subList(0, gate));
        assertThat(linesBeforeGate).containsExactly(lines(twiceCode(original)).getFirst());
    }

    private static List<Integer> lines(List<CodeElement> code) {
        return code.stream().filter(e -> e instanceof LineNumber).map(e -> ((LineNumber) e).line()).toList();
    }

    private static List<CodeElement> twiceCode(byte[] bytes) {
        return ClassFile.of().parse(bytes).methods().stream().filter(m -> m.methodName().equalsString("twice"))
                .findFirst().orElseThrow().code().orElseThrow().elementList();
    }

    private static byte[] classFile(Class<?> type) throws IOException {
        try (InputStream in = type.getResourceAsStream("/" + type.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }
}
