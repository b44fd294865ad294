package dev.weft.it.memory;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.Scope;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.it.comm.CallSite;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.TensorAccess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Tensor#donate()}: a compiled call may write its result into a donated argument's buffer; the numbers are
 * those of the same call without donation; the donated tensor is unusable afterwards, and its buffer is freed when
 * no result took it.
 */
class DonationTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor step(Tensor y) {
        return y.mul(0.5).add(y.sin()).sub(0.25);
    }

    @Compile
    static Tensor total(Tensor y) {
        return y.sum();
    }

    @Compile
    static Tensor both(Tensor a, Tensor b) {
        return a.mul(b).add(a);
    }

    /** Reads only {@code x}: a donated {@code previous} is free from the start, for the result to take. */
    @Compile
    static Tensor tripled(Tensor x, Tensor previous) {
        return x.mul(3);
    }

    static Tensor input(int n) {
        return ScopeTest.input(n);
    }

    static long address(Tensor t) {
        return TensorAccess.data(t).address();
    }

    @Test
    void aDonatedBufferBecomesTheResultWithTheSameNumbers() {
        Tensor x = input(ScopeTest.N);
        Tensor expected = step(step(x));
        Tensor y = step(input(ScopeTest.N));
        long buffer = address(y);
        Tensor donated = y;
        y = step(y.donate());
        assertThat(address(y)).as("the result is written over the donated buffer").isEqualTo(buffer);
        assertThat(y).isEqualTo(expected);
        String line = CallSite.here(); Runnable use = () -> donated.toFloatArray();
        assertThatThrownBy(use::run).isInstanceOf(WeftException.class).hasMessageStartingWith(line + ": ")
                .hasMessageContaining("it was donated to a compiled call of step (DonationTest.java:");
    }

    @Test
    void aLoopThatDonatesItsCarryReusesOneBufferAndMatchesTheEagerLoop() {
        Tensor eager = input(1000);
        Tensor y = input(1000);
        long buffer = -1;
        for (int i = 0; i < 5; i++) {
            eager = eager.mul(0.5).add(eager.sin()).sub(0.25);
            y = step(y.donate());
            buffer = i == 1 ? address(y) : buffer;
            assertThat(i < 2 || address(y) == buffer).as("call %d reuses the buffer", i).isTrue();
        }
        assertThat(y).isEqualTo(eager);
    }

    @Test
    void aResultOfTheSameSizeTakesTheBufferOfADonatedArgumentNoOpReads() {
        Tensor x = input(1000);
        Tensor expected = x.mul(3);
        Tensor y = tripled(x, x.mul(1));
        for (int i = 0; i < 3; i++) {
            long buffer = address(y);
            y = tripled(x, y.donate());
            assertThat(address(y)).as("call %d", i).isEqualTo(buffer);
            assertThat(y).isEqualTo(expected);
        }
    }

    @Test
    void aDonatedBufferNoResultTakesIsFreedByTheCall() {
        Tensor x = input(ScopeTest.N);
        total(x);
        Tensor t = x.mul(1);
        long before = NativeMemory.outstandingBytes();
        Tensor sum = total(t.donate());
        long after = NativeMemory.outstandingBytes();
        assertThat(before - after).as("bytes freed by the call").isGreaterThanOrEqualTo(ScopeTest.BYTES);
        assertThat(sum).isEqualTo(total(x));
        assertThatThrownBy(t::item).isInstanceOf(WeftException.class).hasMessageContaining("donated");
    }

    @Test
    void aTensorPassedTwiceIsNotWrittenOver() {
        Tensor a = input(1000);
        Tensor expected = both(a, a);
        Tensor again = both(a.donate(), a);
        assertThat(again).isEqualTo(expected);
        assertThatThrownBy(a::toFloatArray).isInstanceOf(WeftException.class);
    }

    @Test
    void eagerOperationsIgnoreDonationAndScopesFreeTheAdoptedBuffer() {
        Tensor a = input(1000).donate();
        assertThat(a.add(1).toFloatArray()[0]).isEqualTo(0.5f);
        assertThat(a.toFloatArray()[0]).isEqualTo(-0.5f);
        Tensor y;
        try (Scope s = Weft.scope()) {
            Tensor inside = input(1000);
            y = step(inside.donate());
        }
        assertThatThrownBy(y::item).isInstanceOf(WeftException.class).hasMessageContaining("freed");
    }
}
