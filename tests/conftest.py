"""Tests run in parallel (pytest-xdist, `-n auto` in pytest.ini): one worker per core, fewer where memory is short.

Every notebook runs in its own process and most of a notebook's time is single-threaded (compiling, Python), so two
notebooks side by side finish sooner than one after the other. Each notebook process gets an equal share of the cores
for PyTorch's thread pool (`OMP_NUM_THREADS`), so that the workers do not oversubscribe them.
"""
import os

GB_PER_WORKER = 6   # the largest notebook (real SmolLM2-135M, two processes) peaks at about 5 GB

def _memory_gb():
    try: return os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30
    except (ValueError, OSError, AttributeError): return 2 * GB_PER_WORKER

def pytest_xdist_auto_num_workers(config):
    return max(1, min(os.cpu_count() or 1, int(_memory_gb() // GB_PER_WORKER)))
