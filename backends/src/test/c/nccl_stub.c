/*
 * A stand-in for libnccl.so.2 with the signatures of NCCL's nccl.h: records each call (see stub_log.h) and
 * succeeds unless a failure was injected. Pointers are printed as unsigned decimals; a communicator prints as
 * the rank it was created for. ncclGetUniqueId fills a different byte pattern on every call.
 *
 * Point-to-point calls follow NCCL's grouping rules (nccl.h, enqueue.cc):
 *  - ncclGroupStart/ncclGroupEnd nest per thread; an ncclGroupEnd without a start is ncclInvalidUsage;
 *  - an ncclSend or ncclRecv outside a group is a group of its own;
 *  - when a group ends, every send to self must have a receive from self in the same group and the other way
 *    round ("Trying to send to self without a matching recv"), else ncclGroupEnd (or the lone call) returns
 *    ncclInvalidUsage and the group is dropped;
 *  - send and receive block the GPU: the groups of each rank run one after the other, and a group finishes only
 *    together with the groups holding the matching operations (the k-th send from a to b matches the k-th
 *    receive on b from a), which must be the current group of their rank. stub_stuck_ops lists the operations
 *    that would never finish on real GPUs; ranks are threads of one process, so this state is process-wide.
 */
#include "stub_log.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct { int nranks; int rank; int clique; } stub_comm;
typedef stub_comm *ncclComm_t;
typedef void *cudaStream_t;

static int stub_ids;
static __thread int stub_async;

#define STUB_MAX_CLIQUES 1024
#define STUB_MAX_OPS 8192
#define STUB_MAX_GROUP 512

typedef struct {
    int clique, rank, peer, send, nth;
    size_t count;
    int datatype;
    long group;
    int done;
} stub_op;

static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static ncclUniqueId stub_cliques[STUB_MAX_CLIQUES];
static int stub_nclique;
static stub_op stub_ops[STUB_MAX_OPS];
static int stub_nops;
static long stub_groups;

static __thread int stub_depth;
static __thread stub_op stub_open[STUB_MAX_GROUP];
static __thread int stub_nopen;

/* The clique (one NCCL communicator over several ranks) of unique id `id`. */
static int stub_clique(const ncclUniqueId *id) {
    pthread_mutex_lock(&stub_lock);
    int c = 0;
    while (c < stub_nclique && memcmp(&stub_cliques[c], id, sizeof *id) != 0) {
        c++;
    }
    if (c == stub_nclique && stub_nclique < STUB_MAX_CLIQUES) {
        stub_cliques[stub_nclique++] = *id;
    }
    pthread_mutex_unlock(&stub_lock);
    return c;
}

/* The operation matching `op` (the same ordinal between the same two ranks), or NULL if not posted yet. */
static stub_op *stub_counterpart(const stub_op *op) {
    for (int i = 0; i < stub_nops; i++) {
        stub_op *o = &stub_ops[i];
        if (o->clique == op->clique && o->rank == op->peer && o->peer == op->rank && o->send != op->send
            && o->nth == op->nth) {
            return o;
        }
    }
    return NULL;
}

/* The group that runs now on `rank` of `clique`: its oldest unfinished one, or -1. */
static long stub_head(int clique, int rank) {
    long head = -1;
    for (int i = 0; i < stub_nops; i++) {
        stub_op *o = &stub_ops[i];
        if (!o->done && o->clique == clique && o->rank == rank && (head < 0 || o->group < head)) {
            head = o->group;
        }
    }
    return head;
}

static int stub_is_head(long group, const stub_op *op) {
    return stub_head(op->clique, op->rank) == group;
}

/* Finishes every set of current groups whose operations all match each other, until none is left. */
static void stub_progress(void) {
    int progressed = 1;
    while (progressed) {
        progressed = 0;
        for (int i = 0; i < stub_nops; i++) {
            stub_op *o = &stub_ops[i];
            if (o->done || !stub_is_head(o->group, o)) {
                continue;
            }
            /* Grow the set of groups that must finish together with o's; fail if one is not current. */
            long set[64];
            int nset = 1, ok = 1;
            set[0] = o->group;
            for (int s = 0; s < nset && ok; s++) {
                for (int j = 0; j < stub_nops && ok; j++) {
                    stub_op *m = &stub_ops[j];
                    if (m->done || m->group != set[s]) {
                        continue;
                    }
                    stub_op *c = stub_counterpart(m);
                    if (c == NULL || !stub_is_head(c->group, c)) {
                        ok = 0;
                        break;
                    }
                    int known = 0;
                    for (int k = 0; k < nset; k++) {
                        known |= set[k] == c->group;
                    }
                    if (!known && nset < 64) {
                        set[nset++] = c->group;
                    }
                }
            }
            if (ok) {
                for (int j = 0; j < stub_nops; j++) {
                    for (int k = 0; k < nset; k++) {
                        if (stub_ops[j].group == set[k]) {
                            stub_ops[j].done = 1;
                        }
                    }
                }
                progressed = 1;
            }
        }
    }
}

/* Ends this thread's open group: checks NCCL's self-send rule, then posts it. Returns ncclResult_t. */
static int stub_end_group(void) {
    int n = stub_nopen;
    stub_nopen = 0;
    for (int i = 0; i < n; i++) {
        stub_op *o = &stub_open[i];
        if (o->peer != o->rank) {
            continue;
        }
        int sends = 0, recvs = 0;
        for (int j = 0; j < n; j++) {
            if (stub_open[j].clique == o->clique && stub_open[j].rank == o->rank && stub_open[j].peer == o->rank) {
                sends += stub_open[j].send;
                recvs += !stub_open[j].send;
            }
        }
        if (sends != recvs) {
            stub_record("stub: %s self without a matching %s", sends > recvs ? "send to" : "recv from",
                        sends > recvs ? "recv" : "send");
            return 5;
        }
    }
    pthread_mutex_lock(&stub_lock);
    long group = ++stub_groups;
    for (int i = 0; i < n && stub_nops < STUB_MAX_OPS; i++) {
        stub_op o = stub_open[i];
        o.group = group;
        o.nth = 0;
        for (int j = 0; j < stub_nops; j++) {
            stub_op *p = &stub_ops[j];
            o.nth += p->clique == o.clique && p->rank == o.rank && p->peer == o.peer && p->send == o.send;
        }
        stub_ops[stub_nops++] = o;
    }
    stub_progress();
    pthread_mutex_unlock(&stub_lock);
    return 0;
}

/* Adds a send or receive to this thread's open group, or posts it as a group of its own outside one. */
static int stub_p2p(int send, size_t count, int datatype, int peer, const stub_comm *comm) {
    if (stub_nopen == STUB_MAX_GROUP) {
        return 3;
    }
    stub_open[stub_nopen++] = (stub_op) {comm->clique, comm->rank, peer, send, 0, count, datatype, 0, 0};
    return stub_depth == 0 ? stub_end_group() : 0;
}

/* Forgets every posted point-to-point operation (call with no group open on any rank). */
void stub_p2p_reset(void) {
    pthread_mutex_lock(&stub_lock);
    stub_nops = 0;
    pthread_mutex_unlock(&stub_lock);
}

/* The operations that never finish, one line each ("rank 0 send to 1 count 4"), like stub_calls. */
size_t stub_stuck_ops(char *buf, size_t cap) {
    pthread_mutex_lock(&stub_lock);
    size_t len = 0;
    if (cap > 0) {
        buf[0] = '\0';
    }
    for (int i = 0; i < stub_nops; i++) {
        stub_op *o = &stub_ops[i];
        if (!o->done) {
            char line[128];
            int n = snprintf(line, sizeof line, "rank %d %s %d count %zu\n", o->rank,
                             o->send ? "send to" : "recv from", o->peer, o->count);
            if (len + (size_t) n < cap) {
                memcpy(buf + len, line, (size_t) n + 1);
            }
            len += (size_t) n;
        }
    }
    pthread_mutex_unlock(&stub_lock);
    return len;
}

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
        (*comm)->clique = stub_clique(&id);
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
    int rc = stub_result("ncclSend");
    return rc != 0 ? rc : stub_p2p(1, count, datatype, peer, comm);
}

int ncclRecv(void *recv, size_t count, int datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
    stub_record("ncclRecv buf=%lu count=%zu datatype=%d peer=%d comm=%d stream=%lu",
                (uintptr_t) recv, count, datatype, peer, comm->rank, (uintptr_t) stream);
    int rc = stub_result("ncclRecv");
    return rc != 0 ? rc : stub_p2p(0, count, datatype, peer, comm);
}

int ncclGroupStart(void) {
    stub_record("ncclGroupStart");
    int rc = stub_result("ncclGroupStart");
    stub_depth += rc == 0;
    return rc;
}

int ncclGroupEnd(void) {
    stub_record("ncclGroupEnd");
    if (stub_depth == 0) {
        return 5;
    }
    int rc = stub_result("ncclGroupEnd");
    if (--stub_depth > 0) {
        return rc;
    }
    if (rc != 0) {
        stub_nopen = 0;
        return rc;
    }
    return stub_end_group();
}
