"""Case 5 reference: ITERS steps of mpi4py `Allreduce` (SUM) of COUNT f32 values then a scale by 1/P back into the
input, rank r starting from r+1."""
import numpy as np
from mpi4py import MPI

from protocol import args, check, now, sample

count, iters, reps, warmup = args("COUNT ITERS REPS WARMUP")
comm = MPI.COMM_WORLD
x = np.full(count, comm.rank + 1, dtype=np.float32)
out = np.empty_like(x)
scale = np.float32(1.0 / comm.size)


def loop():
    for _ in range(iters):
        comm.Allreduce(x, out, op=MPI.SUM)
        np.multiply(out, scale, out=x)


for _ in range(warmup):
    loop()
for _ in range(reps):
    comm.Barrier()
    t0 = now()
    loop()
    if comm.rank == 0:
        sample((now() - t0) / iters)
if comm.rank == 0:
    check(float(x.sum(dtype=np.float64)))
