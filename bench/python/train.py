"""Case 12 reference: the training step of dev.weft.bench.weft.TrainBench in PyTorch, as its users write it: a
784-512-512-10 relu MLP (nn.Sequential of nn.Linear), cross_entropy, torch.optim.SGD, f32, a batch of 128 per
process, from the parameters and data TrainData wrote to DIR. With RANKS > 1, RANKS processes (spawned here)
train under DistributedDataParallel with the gloo backend; with 1, one process without DDP. Each process runs on
one thread (torch.set_num_threads(1)). Process 0 times each of STEPS steps, from zero_grad to the loss read back,
and prints one sample per step in order, the first step's global loss (the processes' mean) as the check and
the last one's as info."""
import os
import socket
import sys

import numpy as np

from protocol import check, info, now, sample

LEARNING_RATE = 0.01


def parameters(directory):
    """The Weft-layout parameters (weights [in, out]) as PyTorch's nn.Linear holds them (weights [out, in])."""
    out = []
    for layer in (1, 2, 3):
        w = np.load(os.path.join(directory, f"w{layer}.npy"))
        b = np.load(os.path.join(directory, f"b{layer}.npy"))
        out.append((np.ascontiguousarray(w.T), b))
    return out


def train(rank, ranks, directory, steps, port):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn

    torch.set_num_threads(1)
    if ranks > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ranks)
    layers = [nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)]
    with torch.no_grad():
        for linear, (w, b) in zip(layers[::2], parameters(directory)):
            linear.weight.copy_(torch.from_numpy(w))
            linear.bias.copy_(torch.from_numpy(b))
    model = nn.Sequential(*layers)
    if ranks > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    x = torch.from_numpy(np.load(os.path.join(directory, f"x{rank}.npy")))
    y = torch.from_numpy(np.load(os.path.join(directory, f"y{rank}.npy")))
    first = last = None
    for s in range(steps):
        t0 = now()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()
        if rank == 0:
            sample(now() - t0)
        if s == 0:
            first = value
        last = value
    if ranks > 1:
        losses = torch.tensor([first, last], dtype=torch.float64)
        dist.all_reduce(losses)
        first, last = (losses / ranks).tolist()
        dist.destroy_process_group()
    if rank == 0:
        check(first)
        info(f"loss {last:.6f} at step {steps}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(f"usage: {sys.argv[0]} DIR RANKS STEPS")
    directory = sys.argv[1]
    ranks, steps = int(sys.argv[2]), int(sys.argv[3])
    if ranks > 1:
        import torch.multiprocessing as mp
        mp.spawn(train, args=(ranks, directory, steps, free_port()), nprocs=ranks)
    else:
        train(0, 1, directory, steps, 0)
