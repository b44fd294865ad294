"""Case 2 reference: NumPy `a @ b` on N x N f32; reports the BLAS library the process actually mapped."""
import os

import numpy as np

from protocol import args, check, info, now, sample

n, reps, warmup = args("N REPS WARMUP")
i, j = np.indices((n, n))
a = (((i * n + j) % 7) * 0.25 - 0.75).astype(np.float32)
b = (((i + 2 * j) % 5) * 0.5 - 1.0).astype(np.float32)
for _ in range(warmup):
    a @ b
for _ in range(reps):
    t0 = now()
    c = a @ b
    sample(now() - t0)
check(float(c.sum(dtype=np.float64)))


def mapped_blas():
    """Resolved paths of the BLAS-like shared libraries in this process: what really ran, not what was built."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if ".so" in line}
    found = sorted(os.path.realpath(p) for p in paths if "blas" in p.lower() or "mkl" in p.lower())
    return ", ".join(dict.fromkeys(found)) or "none mapped"


info(f"numpy {np.__version__}, BLAS: {mapped_blas()}")
