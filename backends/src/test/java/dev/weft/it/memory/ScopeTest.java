package dev.weft.it.memory;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Scope;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.it.comm.CallSite;
import dev.weft.spi.NativeMemory;
import dev.weft.testing.Ranks;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Weft#scope()}: the tensors made inside are freed when it closes (the native memory accounting drops at
 * once), kept ones survive, using a freed one is an error at the line of use, scopes nest and are per thread.
 */
class ScopeTest {
    /** 4 Mi f32 = 16 MiB: a large (pooled) buffer. */
    static final int N = 4 << 20;
    static final long BYTES = 4L * N;
    /** A constant a compiled program captures; made inside a scope by {@link #capturedConstantsOutliveTheirScope}. */
    static Tensor offset;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor chain(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    static Tensor chainEagerly(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    @Compile
    static Tensor shifted(Tensor x) {
        return x.add(offset);
    }

    static Tensor input(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (i % 1000) * 0.001f - 0.5f;
        }
        return Tensor.of(v);
    }

    @Test
    void closingFreesWhatWasMadeInside() {
        Tensor x = input(N);
        chain(x);
        Scope s = Weft.scope();
        Tensor y = x.mul(2);
        Tensor z = chain(y);
        Tensor w = Tensor.zeros(DType.F32, N);
        assertThat(s.size()).isGreaterThanOrEqualTo(3);
        long inside = NativeMemory.outstandingBytes();
        s.close();
        long after = NativeMemory.outstandingBytes();
        assertThat(inside - after).as("bytes freed by close").isGreaterThanOrEqualTo(3 * BYTES);
        assertThat(x.size()).isEqualTo(N);
        assertThat(x.toFloatArray()[3]).isEqualTo(0.003f - 0.5f);
        assertThat(y.shape()).containsExactly(N);
        assertThat(z.shape()).containsExactly(N);
        assertThat(w.dtype()).isEqualTo(DType.F32);
    }

    @Test
    void keptTensorsSurviveAndFreedOnesAreAnErrorAtTheLineOfUse() {
        Tensor kept;
        Tensor dropped;
        try (Scope s = Weft.scope()) {
            dropped = Tensor.of(new float[] {1, 2, 3});
            kept = s.keep(dropped.mul(10));
        }
        assertThat(kept.toFloatArray()).containsExactly(10, 20, 30);
        String line = CallSite.here(); Runnable use = () -> dropped.add(1);
        assertThatThrownBy(use::run).isInstanceOf(WeftException.class).hasMessageStartingWith(line + ": ")
                .hasMessageContaining("was freed when its scope (opened at ScopeTest.java:")
                .hasMessageContaining("closed at ScopeTest.java:");
        assertThatThrownBy(dropped::toFloatArray).isInstanceOf(WeftException.class)
                .hasMessageContaining("f32[3] tensor can no longer be used");
        String callLine = CallSite.here(); Runnable call = () -> chain(dropped);
        assertThatThrownBy(call::run).isInstanceOf(WeftException.class).hasMessageStartingWith(callLine + ": ");
        assertThat(dropped.toString()).isEqualTo("Tensor(f32[3], freed)");
        assertThat(dropped.shape()).containsExactly(3);
    }

    @Test
    void compiledEqualsEagerInsideAScope() {
        Tensor x = input(10_000);
        Tensor compiledOutside = chain(x);
        try (Scope s = Weft.scope()) {
            Tensor compiled = chain(x);
            assertThat(compiled).isEqualTo(chainEagerly(x));
            assertThat(compiled).isEqualTo(compiledOutside);
        }
        assertThat(compiledOutside).isEqualTo(chainEagerly(x));
    }

    @Test
    void scopesNestAndKeepHandsATensorToTheEnclosingOne() {
        Tensor middle;
        Tensor survivor;
        try (Scope outer = Weft.scope()) {
            try (Scope inner = Weft.scope()) {
                middle = inner.keep(Tensor.of(new float[] {4, 5}));
                Tensor.of(new float[] {6});
                assertThat(inner.size()).isEqualTo(1);
            }
            assertThat(middle.toFloatArray()).containsExactly(4, 5);
            assertThat(outer.size()).isEqualTo(1);
            survivor = outer.keep(middle.add(1));
        }
        assertThat(survivor.toFloatArray()).containsExactly(5, 6);
        assertThatThrownBy(middle::item).isInstanceOf(WeftException.class).hasMessageContaining("freed");
    }

    @Test
    void aScopeDoesNotKeepWhatTheProgramDropped() throws InterruptedException {
        try (Scope s = Weft.scope()) {
            for (int i = 0; i < 3; i++) {
                Tensor.zeros(DType.F32, 1000);
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (s.size() > 0 && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(10);
            }
            assertThat(s.size()).isZero();
        }
    }

    @Test
    void anOuterScopeCannotCloseBeforeAnInnerOne() {
        Scope outer = Weft.scope();
        Scope inner = Weft.scope();
        assertThatThrownBy(outer::close).isInstanceOf(WeftException.class)
                .hasMessageContaining("close the inner one first");
        inner.close();
        outer.close();
        outer.close();
    }

    @Test
    void aScopeBelongsToItsThread() throws InterruptedException {
        AtomicReference<Tensor> other = new AtomicReference<>();
        AtomicReference<Throwable> misuse = new AtomicReference<>();
        try (Scope s = Weft.scope()) {
            Thread t = new Thread(() -> {
                other.set(Tensor.of(new float[] {7}));
                try {
                    s.keep(other.get());
                } catch (WeftException e) {
                    misuse.set(e);
                }
            });
            t.start();
            t.join();
            assertThat(s.size()).isZero();
        }
        assertThat(other.get().item()).isEqualTo(7);
        assertThat(misuse.get()).isInstanceOf(WeftException.class).hasMessageContaining("belongs to thread");
    }

    @Test
    void capturedConstantsOutliveTheirScope() {
        Tensor x = Tensor.of(new float[] {1, 2});
        try (Scope s = Weft.scope()) {
            offset = Tensor.of(new float[] {10, 20});
            assertThat(shifted(x).toFloatArray()).containsExactly(11, 22);
        }
        assertThat(shifted(x).toFloatArray()).containsExactly(11, 22);
        assertThat(offset.toFloatArray()).containsExactly(10, 20);
    }

    @Ranks({3})
    void eachFakeRankHasItsOwnScope(Comm world) {
        Tensor total;
        Tensor local;
        try (Scope s = Weft.scope()) {
            local = Tensor.full(DType.F64, world.rank() + 1, 1000);
            Tensor sum = world.allreduce(local.mul(2), ReduceOp.SUM);
            total = s.keep(sum.sum());
        }
        assertThat(total.item()).isEqualTo(2 * (1 + 2 + 3) * 1000.0);
        assertThatThrownBy(local::item).isInstanceOf(WeftException.class).hasMessageContaining("freed");
    }
}
