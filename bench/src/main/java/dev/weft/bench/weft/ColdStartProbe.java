package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import net.bytebuddy.agent.ByteBuddyAgent;

/**
 * What a fresh JVM spends before its first compiled result, in four steps, each printed as {@code <name> <ms>}:
 * {@code attach} (Byte Buddy's attach to this JVM; 0 when the JVM was started with {@code -javaagent}),
 * {@code agent} ({@code Weft.install()} given that attachment: the agent's own installation, what
 * {@code -javaagent}'s premain does), {@code eager} (the first tensor operation) and {@code compiled} (the first
 * call of a 6-op {@code @Compile} program on f32[1000]: trace, lower, compile, run). Then {@code check <sum>}.
 * Run by {@link ColdBench}, one fresh JVM per sample.
 */
public final class ColdStartProbe {
    private ColdStartProbe() {
    }

    /** Six operations, as in the chain case: {@code |sin(x*2+1)*x-0.5|}. */
    @Compile
    static Tensor sixOps(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    public static void main(String[] args) {
        boolean agentLoaded = Boolean.getBoolean("weft.probe.agentLoaded");
        long t0 = System.nanoTime();
        if (!agentLoaded) {
            ByteBuddyAgent.install();
        }
        long t1 = System.nanoTime();
        Weft.install();
        long t2 = System.nanoTime();
        Tensor x = Tensor.arange(DType.F32, 1000).mul(0.001);
        long t3 = System.nanoTime();
        double sum = sixOps(x).sum().item();
        long t4 = System.nanoTime();
        System.out.println("attach " + (t1 - t0) * 1e-6);
        System.out.println("agent " + (t2 - t1) * 1e-6);
        System.out.println("eager " + (t3 - t2) * 1e-6);
        System.out.println("compiled " + (t4 - t3) * 1e-6);
        System.out.println("check " + sum);
    }
}
