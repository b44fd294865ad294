package dev.weft.backends.cpu.cc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A library's key is the same whether its source is hashed whole or as a prelude and the rest (the prelude's
 * digest is kept and copied), for any order of preludes, and it changes with any part of the source.
 */
class CompilerKeyTest {
    private final CCompiler cc = new CCompiler(Path.of("/bin/true"), null);

    @Test
    void aPreludeAndTheRestGiveTheKeyOfTheWholeSource() {
        String prelude = "#include <math.h>\nstatic inline float twice(float x) { return 2 * x; }\n";
        String other = "#include <stdint.h>\n";
        for (String rest : new String[] {"void f(float *a) { a[0] = twice(a[0]); }\n", "", "void g(void) {}\n"}) {
            assertThat(cc.key(prelude, rest)).isEqualTo(cc.key(prelude + rest)).hasSize(32);
            assertThat(cc.key(other, rest)).isEqualTo(cc.key(other + rest));
            assertThat(cc.key(prelude, rest)).isEqualTo(cc.key(prelude + rest));
        }
        assertThat(cc.key(prelude, "void f(void) {}\n")).isNotEqualTo(cc.key(prelude, "void g(void) {}\n"))
                .isNotEqualTo(cc.key(other, "void f(void) {}\n"));
    }

    @Test
    void anotherCompilerGivesAnotherKey() {
        CCompiler another = new CCompiler(Path.of("/bin/false"), null);
        assertThat(another.key("a", "b")).isNotEqualTo(cc.key("a", "b"));
    }
}
