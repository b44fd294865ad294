"""Case 1 reference: y = |sin(x*2+1)*x - 0.5| over N f32 values as one NumPy expression (one pass per op)."""
import numpy as np

from protocol import args, check, now, sample

n, reps, warmup = args("N REPS WARMUP")
x = ((np.arange(n) % 1000) * 0.001 - 0.5).astype(np.float32)


def chain(x):
    return np.abs(np.sin(x * 2 + 1) * x - 0.5)


for _ in range(warmup):
    chain(x)
for _ in range(reps):
    t0 = now()
    y = chain(x)
    sample(now() - t0)
assert y.dtype == np.float32
check(float(y.sum(dtype=np.float64)))
