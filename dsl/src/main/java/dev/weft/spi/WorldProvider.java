package dev.weft.spi;

/**
 * Supplies {@code Comm.world()} when no world is bound to the calling thread (MPI under {@code mpirun}, or a
 * one-rank world otherwise); found with {@link java.util.ServiceLoader}.
 */
public interface WorldProvider {
    CommHandle world();
}
