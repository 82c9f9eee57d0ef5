"""Run every notebook in nbs/ as a test, each in a fresh process (JAX device flags are per process).

The tests themselves live inline in the notebooks. `FELAFAX_TEST_FLAGS="slow"` also runs the cells flagged `#| slow`.
"""
import getpass, os, subprocess, sys, tempfile, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
# Highest number first: the later notebooks build on the earlier ones and take longest, so with parallel workers
# they start first and the workers finish together.
NBS = sorted((p for p in (ROOT/'nbs').glob('*.ipynb') if not p.name.startswith('_')), reverse=True)

def _env(tmp) -> dict:
    ("This process's environment with its temporary files in `tmp` (removed after the notebook: the notebooks' "
     "scratch models and runs do not pile up in /tmp run after run), PyTorch's compiler cache still shared where it "
     "was; under pytest-xdist, PyTorch's threads limited to this worker's share of the cores.")
    env = {**os.environ, 'TMPDIR': str(tmp)}
    env.setdefault('TORCHINDUCTOR_CACHE_DIR', os.path.join(tempfile.gettempdir(), f'torchinductor_{getpass.getuser()}'))
    workers = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1'))
    if workers > 1 and 'OMP_NUM_THREADS' not in os.environ:
        env['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // workers))
    return env

@pytest.mark.parametrize('nb', NBS, ids=[p.stem for p in NBS])
def test_notebook(nb):
    flags = os.environ.get('FELAFAX_TEST_FLAGS', '')
    exe = Path(sys.executable).parent/'nbdev_test'
    cmd = [str(exe) if exe.exists() else 'nbdev_test', '--path', str(nb), '--flags', flags]
    t = time.time()
    with tempfile.TemporaryDirectory(prefix=f'{nb.stem}-', ignore_cleanup_errors=True) as tmp:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=_env(tmp))
    print(f"{nb.name}: {time.time()-t:.0f} s")
    assert r.returncode == 0, f"{nb.name} failed:\n{r.stdout[-4000:]}\n{r.stderr[-8000:]}"
