package dev.weft.it.mpi;

import dev.weft.comm.Comm;

/**
 * After MPI is initialised, makes compiled code meet nulls: a method the JIT compiled with an implicit null check
 * (a hardware fault the JVM turns into a NullPointerException) called with null many times. Prints how many it
 * caught; a signal handler that is not the JVM's would kill the process instead.
 */
public final class NullChecksProgram {
    private NullChecksProgram() {
    }

    private static int length(String s) {
        return s.length();
    }

    public static void main(String[] args) {
        Comm world = Comm.world();
        long sum = 0;
        for (int i = 0; i < 2_000_000; i++) {
            sum += length("warm");
        }
        int caught = 0;
        for (int i = 0; i < 20_000; i++) {
            try {
                sum += length(i % 2 == 0 ? null : "x");
            } catch (NullPointerException e) {
                caught++;
            }
        }
        System.out.println("rank " + world.rank() + " caught " + caught + " sum " + sum);
    }
}
