"""Case 5 reference: ITERS mpi4py `Allreduce` (SUM) of COUNT f32 values, rank r contributing r+1."""
import numpy as np
from mpi4py import MPI

from protocol import args, check, now, sample

count, iters, reps, warmup = args("COUNT ITERS REPS WARMUP")
comm = MPI.COMM_WORLD
x = np.full(count, comm.rank + 1, dtype=np.float32)
out = np.empty_like(x)


def loop():
    for _ in range(iters):
        comm.Allreduce(x, out, op=MPI.SUM)


for _ in range(warmup):
    loop()
for _ in range(reps):
    comm.Barrier()
    t0 = now()
    loop()
    if comm.rank == 0:
        sample((now() - t0) / iters)
if comm.rank == 0:
    check(float(out.sum(dtype=np.float64)))
