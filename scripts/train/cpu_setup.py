# cpu_setup.py: process settings that make PyTorch training on this CPU several times
# faster; import it BEFORE numpy and torch.
# 1. Debian's OpenBLAS (DYNAMIC_ARCH) does not recognise some virtual CPUs and falls back
#    to its generic "Prescott" SSE3 kernels (~20 GFLOPS instead of ~75 per core here):
#    OPENBLAS_CORETYPE picks the kernels from the CPU flags (unless already set).
# 2. glibc serves allocations >= 32 MB with fresh mmaps, so every large activation pays
#    page faults again; M_MMAP_MAX = 0 keeps them in the heap, a high M_TRIM_THRESHOLD
#    keeps freed memory for reuse.
# 3. libgomp's default waiting spins: when another process holds a core, every parallel
#    region waits for a descheduled thread (2 threads ran 4-20x slower than 1 here).
#    OMP_WAIT_POLICY=PASSIVE makes waiting threads sleep (unless already set).
import ctypes
import os


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if "OPENBLAS_CORETYPE" not in os.environ:
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl"} <= flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif "avx2" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"

try:
    _libc = ctypes.CDLL("libc.so.6")
    _libc.mallopt(-4, 0)              # M_MMAP_MAX
    _libc.mallopt(-1, 2**31 - 1)      # M_TRIM_THRESHOLD
except OSError:
    pass


def set_threads(n):
    """torch's intra-op threads and OpenBLAS's own pool (Debian's is pthread-based and
    does not follow torch.set_num_threads)."""
    import torch
    torch.set_num_threads(n)
    for name in ("libopenblas.so.0", "libopenblas.so"):
        try:
            ctypes.CDLL(name).openblas_set_num_threads(n)
            break
        except (OSError, AttributeError):
            continue
