package dev.weft.it.mpi;

import dev.weft.it.CommErrorCases;
import dev.weft.comm.Comm;

/**
 * Runs every row of {@link CommErrorCases} under {@code mpirun}, eagerly and inside {@code @Compile}, and prints
 * {@code rank R: N rows ok}; a row that does not fail as it should throws, which ends the job. It installs no
 * agent itself: Weft does on its first use.
 */
public final class ErrorCasesProgram {
    private ErrorCasesProgram() {
    }

    public static void main(String[] args) {
        Comm world = Comm.world();
        for (CommErrorCases.Case c : CommErrorCases.CASES) {
            CommErrorCases.check(c, world, false);
            world.barrier();
            CommErrorCases.check(c, world, true);
            world.barrier();
        }
        System.out.println("rank " + world.rank() + ": " + CommErrorCases.CASES.size() + " rows ok");
    }
}
