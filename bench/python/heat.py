"""Case 6 reference: the dev.weft.examples.Heat step with mpi4py halo exchange and NumPy slicing on a
ROWS x COLS f64 grid, rows split over ranks, zero boundaries."""
import numpy as np
from mpi4py import MPI

from protocol import args, check, now, sample

ALPHA = 0.1
rows, m, steps, reps, warmup = args("ROWS COLS STEPS REPS WARMUP")
comm = MPI.COMM_WORLD
if rows % comm.size:
    raise SystemExit(f"{rows} rows do not split over {comm.size} ranks")
n = rows // comm.size
up = comm.rank - 1 if comm.rank > 0 else MPI.PROC_NULL
down = comm.rank + 1 if comm.rank < comm.size - 1 else MPI.PROC_NULL
yy, xx = np.indices((n, m))
y = (comm.rank * n + yy + 0.5) / rows
x = (xx + 0.5) / m
initial = np.exp(-40 * ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)))


def run(u):
    p = np.zeros((n + 2, m + 2))
    for _ in range(steps):
        p[1:-1, 1:-1] = u
        comm.Sendrecv(p[1, 1:-1].copy(), up, 0, p[n + 1, 1:-1], down, 0)
        comm.Sendrecv(p[n, 1:-1].copy(), down, 1, p[0, 1:-1], up, 1)
        u = u + (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - u * 4) * ALPHA
    return u


for r in range(warmup + reps):
    comm.Barrier()
    t0 = now()
    u = run(initial)
    comm.Barrier()
    if comm.rank == 0 and r >= warmup:
        sample((now() - t0) / steps)
total = comm.reduce(float(u.sum()), op=MPI.SUM, root=0)
if comm.rank == 0:
    check(total)
