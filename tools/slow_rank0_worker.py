"""A torchrun worker whose rank 0 takes `--rank0_wait` seconds longer to write each checkpoint (and, with `--rank0_fails`,
then fails as a full disk would), for the tests of the ranks' wait for rank 0 in `nbs/08b_train_torch.ipynb`.

It is `felafax_lit.train_torch`'s own worker (`main`, with its notes to `--out` and its `--timeout`)."""
import sys, time
from felafax_lit import train_torch

i = sys.argv.index('--rank0_wait'); wait = float(sys.argv[i + 1]); del sys.argv[i:i + 2]
fails = '--rank0_fails' in sys.argv
if fails: sys.argv.remove('--rank0_fails')
_write = train_torch.write_checkpoint
def _slow(*a, **kw):   # called by rank 0 alone
    time.sleep(wait)
    if fails: raise OSError(28, 'No space left on device')
    return _write(*a, **kw)
train_torch.write_checkpoint = _slow
train_torch.main()
