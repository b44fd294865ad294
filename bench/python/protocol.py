"""Shared by the Python references: argument parsing and the output protocol the bench driver reads
("sample <seconds per unit>", "check <value>", "info <text>")."""
import sys
import time

now = time.perf_counter


def args(usage):
    """The integer command-line arguments named in usage (space-separated); exits 2 when some are missing."""
    names = usage.split()
    if len(sys.argv) - 1 < len(names):
        sys.exit(f"usage: {sys.argv[0]} {usage}")
    return [int(a) for a in sys.argv[1:1 + len(names)]]


def sample(seconds):
    print(f"sample {seconds:.9e}", flush=True)


def check(value):
    print(f"check {value!r}", flush=True)


def info(text):
    print(f"info {text}", flush=True)
