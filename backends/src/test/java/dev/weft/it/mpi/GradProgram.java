package dev.weft.it.mpi;

import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.it.ad.AdPrograms;
import dev.weft.it.ad.AdRulesTest;
import dev.weft.it.ad.CommGradTest;
import dev.weft.it.ad.GradAcrossRanksTest;
import dev.weft.it.comm.CartCommTest;
import dev.weft.it.comm.GatherScatterScanTest;
import dev.weft.it.comm.GradientBucketsTest;
import dev.weft.it.comm.RecvAnyTest;
import dev.weft.it.comm.VariableCountsTest;
import java.util.Random;

/**
 * Run by {@link MpiGradTest} under {@code mpirun}: every case of {@link CommGradTest} in forward and reverse mode
 * against finite differences of the global function, the varying/invariant checks of {@link GradAcrossRanksTest}
 * (gradients of the global loss, replicated data-parallel parameters, constants from the rank), the values of the
 * other communication routines' tests ({@code recvAny}'s wildcards among them), the MLP training step whose
 * gradient allreduces are fused into buckets ({@link GradientBucketsTest}), then a compiled
 * data-parallel step from {@code Weft.grad} against the eager one; prints {@code rank R: N cases ok} and the step's
 * result.
 */
public final class GradProgram {
    private GradProgram() {
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int ok = 0;
        for (CommGradTest.Case c : CommGradTest.cases()) {
            if (world.size() >= c.minRanks()) {
                CommGradTest.checkForward(c, world);
                CommGradTest.checkReverse(c, world);
                ok++;
            }
        }
        GradAcrossRanksTest.checkGlobalLoss(world);
        GradAcrossRanksTest.checkDataParallel(world);
        GradAcrossRanksTest.checkRankConstant(world);
        GradAcrossRanksTest.checkMpi4jaxTransposes(world);
        GatherScatterScanTest.checkValues(world);
        GatherScatterScanTest.checkGradients(world);
        CartCommTest.checkGrid(world);
        CartCommTest.checkNeighbours(world);
        CartCommTest.checkGradients(world);
        VariableCountsTest.checkValues(world);
        VariableCountsTest.checkGradients(world);
        RecvAnyTest.checkValues(world);
        GradientBucketsTest.checkTrainingStep(world);
        Random rnd = new Random(world.rank());
        Tensor x = AdRulesTest.random(new long[] {6, 3}, -1, 1, false, rnd);
        Tensor y = AdRulesTest.random(new long[] {6}, -1, 1, false, rnd);
        Tensor w = Tensor.of(new double[] {0.3, -0.2, 0.1});
        Tensor eager = AdPrograms.dataParallelStepEager(world, x, y, w, 6.0 * world.size());
        Tensor compiled = AdPrograms.dataParallelStepCompiled(world, x, y, w, 6.0 * world.size());
        if (eager.sub(compiled).abs().max().item() != 0) {
            throw new IllegalStateException("compiled step " + compiled + " differs from the eager " + eager);
        }
        System.out.println("rank " + world.rank() + ": " + ok + " cases ok, step " + compiled);
    }
}
