/*
 * A stand-in for libnccl.so.2 with the signatures of NCCL's nccl.h: records each call (see stub_log.h) and
 * succeeds unless a failure was injected. Pointers are printed as unsigned decimals; a communicator prints as
 * the rank it was created for. ncclGetUniqueId fills a different byte pattern on every call.
 */
#include "stub_log.h"
#include <stdint.h>
#include <stdlib.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct { int nranks; int rank; } stub_comm;
typedef stub_comm *ncclComm_t;
typedef void *cudaStream_t;

static int stub_ids;
static __thread int stub_async;

/* Makes ncclCommGetAsyncError report `code` on this thread until reset with 0. */
void stub_async_error(int code) {
    stub_async = code;
}

const char *ncclGetErrorString(int result) {
    static __thread char text[64];
    snprintf(text, sizeof text, "stub error %d", result);
    return text;
}

int ncclGetVersion(int *version) {
    stub_record("ncclGetVersion");
    *version = 22703;
    return stub_result("ncclGetVersion");
}

int ncclGetUniqueId(ncclUniqueId *id) {
    int seed = __atomic_add_fetch(&stub_ids, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 128; i++) {
        id->internal[i] = (char) (seed * 37 + i);
    }
    stub_record("ncclGetUniqueId");
    return stub_result("ncclGetUniqueId");
}

int ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    char hex[257];
    for (int i = 0; i < 128; i++) {
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char) id.internal[i]);
    }
    stub_record("ncclCommInitRank nranks=%d rank=%d id=%s", nranks, rank, hex);
    int rc = stub_result("ncclCommInitRank");
    if (rc == 0) {
        *comm = malloc(sizeof(stub_comm));
        (*comm)->nranks = nranks;
        (*comm)->rank = rank;
    }
    return rc;
}

int ncclCommDestroy(ncclComm_t comm) {
    stub_record("ncclCommDestroy comm=%d", comm->rank);
    free(comm);
    return stub_result("ncclCommDestroy");
}

int ncclCommAbort(ncclComm_t comm) {
    stub_record("ncclCommAbort comm=%d", comm->rank);
    free(comm);
    return stub_result("ncclCommAbort");
}

int ncclCommGetAsyncError(ncclComm_t comm, int *error) {
    stub_record("ncclCommGetAsyncError comm=%d", comm->rank);
    *error = stub_async;
    return stub_result("ncclCommGetAsyncError");
}

int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, ncclComm_t comm,
                  cudaStream_t stream) {
    stub_record("ncclAllReduce send=%lu recv=%lu count=%zu datatype=%d op=%d comm=%d stream=%lu",
                (uintptr_t) send, (uintptr_t) recv, count, datatype, op, comm->rank, (uintptr_t) stream);
    return stub_result("ncclAllReduce");
}

int ncclAllGather(const void *send, void *recv, size_t count, int datatype, ncclComm_t comm, cudaStream_t stream) {
    stub_record("ncclAllGather send=%lu recv=%lu count=%zu datatype=%d comm=%d stream=%lu",
                (uintptr_t) send, (uintptr_t) recv, count, datatype, comm->rank, (uintptr_t) stream);
    return stub_result("ncclAllGather");
}

int ncclReduceScatter(const void *send, void *recv, size_t count, int datatype, int op, ncclComm_t comm,
                      cudaStream_t stream) {
    stub_record("ncclReduceScatter send=%lu recv=%lu count=%zu datatype=%d op=%d comm=%d stream=%lu",
                (uintptr_t) send, (uintptr_t) recv, count, datatype, op, comm->rank, (uintptr_t) stream);
    return stub_result("ncclReduceScatter");
}

int ncclBroadcast(const void *send, void *recv, size_t count, int datatype, int root, ncclComm_t comm,
                  cudaStream_t stream) {
    stub_record("ncclBroadcast send=%lu recv=%lu count=%zu datatype=%d root=%d comm=%d stream=%lu",
                (uintptr_t) send, (uintptr_t) recv, count, datatype, root, comm->rank, (uintptr_t) stream);
    return stub_result("ncclBroadcast");
}

int ncclReduce(const void *send, void *recv, size_t count, int datatype, int op, int root, ncclComm_t comm,
               cudaStream_t stream) {
    stub_record("ncclReduce send=%lu recv=%lu count=%zu datatype=%d op=%d root=%d comm=%d stream=%lu",
                (uintptr_t) send, (uintptr_t) recv, count, datatype, op, root, comm->rank, (uintptr_t) stream);
    return stub_result("ncclReduce");
}

int ncclSend(const void *send, size_t count, int datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
    stub_record("ncclSend buf=%lu count=%zu datatype=%d peer=%d comm=%d stream=%lu",
                (uintptr_t) send, count, datatype, peer, comm->rank, (uintptr_t) stream);
    return stub_result("ncclSend");
}

int ncclRecv(void *recv, size_t count, int datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
    stub_record("ncclRecv buf=%lu count=%zu datatype=%d peer=%d comm=%d stream=%lu",
                (uintptr_t) recv, count, datatype, peer, comm->rank, (uintptr_t) stream);
    return stub_result("ncclRecv");
}

int ncclGroupStart(void) {
    stub_record("ncclGroupStart");
    return stub_result("ncclGroupStart");
}

int ncclGroupEnd(void) {
    stub_record("ncclGroupEnd");
    return stub_result("ncclGroupEnd");
}
