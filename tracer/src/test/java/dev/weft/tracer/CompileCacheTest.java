package dev.weft.tracer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.weft.Tensor;
import dev.weft.spi.Setting;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CompileCacheTest {
    private final List<String> closed = new ArrayList<>();

    /** An executable that records its closing under {@code name}. */
    private Executable executable(String name) {
        return new Executable() {
            @Override
            public List<Tensor> run(List<Tensor> args) {
                return args;
            }

            @Override
            public void close() {
                closed.add(name);
            }
        };
    }

    @BeforeEach
    void defaultLimit() {
        assumeThat((long) CompileCache.limit()).isEqualTo(Setting.COMPILE_CACHE.defaultValue());
    }

    @Test
    void evictsAndClosesTheLeastRecentlyUsedBeyondTheLimit() {
        CompileCache cache = new CompileCache();
        for (int k = 0; k < CompileCache.limit(); k++) {
            cache.add(k, executable("e" + k));
        }
        assertThat(cache.get(0)).isNotNull();
        cache.add("new", executable("new"));
        assertThat(closed).containsExactly("e1");
        assertThat(cache.size()).isEqualTo(CompileCache.limit());
        assertThat(cache.get(1)).isNull();
        assertThat(cache.get(0)).isNotNull();
        assertThat(cache.get("new")).isNotNull();
        cache.add("newer", executable("newer"));
        assertThat(closed).containsExactly("e1", "e2");
    }

    @Test
    void anExecutableCompiledTwiceIsKeptOnceAndTheOtherClosed() {
        CompileCache cache = new CompileCache();
        Executable first = executable("first");
        assertThat(cache.add("k", first)).isSameAs(first);
        assertThat(cache.add("k", executable("second"))).isSameAs(first);
        assertThat(closed).containsExactly("second");
        assertThat(cache.get("k")).isSameAs(first);
        assertThat(cache.size()).isEqualTo(1);
    }
}
