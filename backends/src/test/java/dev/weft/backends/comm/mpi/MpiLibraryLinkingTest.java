package dev.weft.backends.comm.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/**
 * Opening the MPI library links no function but the one that checks its version: each is linked at its first
 * call. Runs in this JVM without {@code MPI_Init}, which these calls do not need.
 */
class MpiLibraryLinkingTest {
    @Test
    void functionsAreLinkedOnTheirFirstCall() {
        MpiLibrary lib;
        try {
            lib = MpiLibrary.load();
        } catch (IllegalStateException e) {
            assumeTrue(false, "no MPI library: " + e.getMessage());
            return;
        }
        assertThat(lib.linked()).contains("MPI_Get_library_version")
                .doesNotContain("MPI_Initialized", "MPI_Allreduce", "MPI_Init_thread");
        lib.initialized();
        assertThat(lib.linked()).contains("MPI_Initialized", "MPI_Get_library_version")
                .doesNotContain("MPI_Allreduce", "MPI_Send", "MPI_Comm_split");
    }
}
