"""Run every notebook in nbs/ as a test, each in a fresh process (JAX device flags are per process).

The tests themselves live inline in the notebooks. `FELAFAX_TEST_FLAGS="slow"` also runs the cells flagged `#| slow`.
"""
import os, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = sorted(p for p in (ROOT/'nbs').glob('*.ipynb') if not p.name.startswith('_'))

@pytest.mark.parametrize('nb', NBS, ids=[p.stem for p in NBS])
def test_notebook(nb):
    flags = os.environ.get('FELAFAX_TEST_FLAGS', '')
    exe = Path(sys.executable).parent/'nbdev_test'
    cmd = [str(exe) if exe.exists() else 'nbdev_test', '--path', str(nb), '--flags', flags]
    t = time.time()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(f"{nb.name}: {time.time()-t:.0f} s")
    assert r.returncode == 0, f"{nb.name} failed:\n{r.stdout[-4000:]}\n{r.stderr[-8000:]}"
