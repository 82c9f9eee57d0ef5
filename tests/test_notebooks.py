"""Run every notebook in nbs/ as a test, each in a fresh process (JAX device flags are per process).

The tests themselves live inline in the notebooks. `FELAFAX_TEST_FLAGS="slow"` also runs the cells flagged `#| slow`.
"""
import getpass, os, signal, subprocess, sys, tempfile, time, warnings
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
# Longest first, so that with parallel workers (pytest-xdist hands tests out in this order) the long ones start
# first and the workers finish together: the order of their durations in a CI run on a 2-core machine (08b took
# 184 s, 00_core 16 s); a notebook not listed goes first. By those durations the earlier order, highest number first,
# gave the two workers 586 and 640 s of notebooks (the docs build's 57 s included); this one about 613 each.
SLOWEST_FIRST = ('08b_train_torch', '08a_train_jax', '08c_planner', '09_cli', '10_benchmarks', '11_reliability',
                 '01_model', '05a_quant_jax', '03_sharding', '04_lora', '00_core', 'index', '02_conversion', '07_data',
                 '06_fsdp', '05b_quant_torch', '08_training')
NBS = sorted((p for p in (ROOT/'nbs').glob('*.ipynb') if not p.name.startswith('_')),
             key=lambda p: (SLOWEST_FIRST.index(p.stem) if p.stem in SLOWEST_FIRST else -1, p.name))
# A notebook still running after this long is stuck (the longest takes about 4 minutes on two busy cores; with the `slow`
# cells, the kill matrix alone takes about 15): it is stopped, where each of its processes was is shown (a warning in
# pytest's summary), and it runs once more; stuck twice, it fails. A failing notebook fails at once. One run on record
# (of some sixty) never ended; no rerun of it has.
TIMEOUT = float(os.environ.get('FELAFAX_NOTEBOOK_TIMEOUT') or
                (3600 if 'slow' in os.environ.get('FELAFAX_TEST_FLAGS', '') else 900))

def _env(tmp) -> dict:
    ("This process's environment with its temporary files in `tmp` (removed after the notebook: the notebooks' "
     "scratch models and runs do not pile up in /tmp run after run), PyTorch's compiler cache still shared where it "
     "was; under pytest-xdist, PyTorch's threads limited to this worker's share of the cores.")
    env = {**os.environ, 'TMPDIR': str(tmp), 'PYTHONFAULTHANDLER': '1'}   # SIGABRT prints every thread's stack
    env.setdefault('TORCHINDUCTOR_CACHE_DIR', os.path.join(tempfile.gettempdir(), f'torchinductor_{getpass.getuser()}'))
    workers = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1'))
    if workers > 1 and 'OMP_NUM_THREADS' not in os.environ:
        env['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // workers))
    return env

def _descendants(pid:int) -> list[int]:
    "Every process below `pid` (read from /proc), children before their own children."
    kids = {}
    for d in filter(str.isdigit, os.listdir('/proc')):
        try: ppid = int(open(f'/proc/{d}/stat').read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError): continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo: out += (k := kids.get(todo.pop(0), [])); todo += k
    return out

def _stop(p) -> tuple[str, str]:
    ("Stop notebook process `p` and everything it started (torchrun's ranks run in sessions of their own): each Python "
     "process prints its stacks first (SIGABRT, faulthandler), the deepest first, while the ones reading their output "
     "still run; its (stdout, stderr).")
    procs = [p.pid, *_descendants(p.pid)]
    for q in reversed(procs):
        try: os.kill(q, signal.SIGABRT)
        except OSError: pass
        if q != p.pid: time.sleep(0.5)
    try: return p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        for q in procs:
            try: os.kill(q, signal.SIGKILL)
            except OSError: pass
    try: return p.communicate(timeout=30)
    except subprocess.TimeoutExpired as e:   # a process outside the tree (an orphan) still holds its pipes
        return tuple((b or b'').decode(errors='replace') for b in (e.stdout, e.stderr))

def _run(cmd, nb) -> tuple[int|None, str, str]:
    "Run notebook `nb` with `cmd`, its temporary files in a folder of its own: (exit status or None if stuck, out, err)."
    with tempfile.TemporaryDirectory(prefix=f'{nb.stem}-', ignore_cleanup_errors=True) as tmp:
        p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp))
        try: out, err = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired: return (None, *_stop(p))
        return p.returncode, out, err

@pytest.mark.parametrize('nb', NBS, ids=[p.stem for p in NBS])
def test_notebook(nb):
    flags = os.environ.get('FELAFAX_TEST_FLAGS', '')
    exe = Path(sys.executable).parent/'nbdev_test'
    cmd = [str(exe) if exe.exists() else 'nbdev_test', '--path', str(nb), '--flags', flags]
    for attempt in (1, 2):
        t = time.time(); rc, out, err = _run(cmd, nb)
        if rc is not None: break
        stuck = (f"{nb.name} was still running after {TIMEOUT:.0f} s (FELAFAX_NOTEBOOK_TIMEOUT), run {attempt} of 2; "
                 f"where its processes were:\n{out[-4000:]}\n{err[-12000:]}")
        warnings.warn(stuck)
    else: pytest.fail(stuck)
    print(f"{nb.name}: {time.time()-t:.0f} s")
    assert rc == 0, f"{nb.name} failed:\n{out[-4000:]}\n{err[-8000:]}"
