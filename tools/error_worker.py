"""What each process runs in the rank-error check of `nbs/08b_train_torch.ipynb` (a test harness, not library API):
`train_torch.main`, whose `train` raises, on the ranks named by `--fail_ranks`, the exception `--kind` with `--message`;
the other ranks wait in an all-reduce for them, as a step's ranks wait for the one that failed in it."""
import builtins, sys
import torch
import torch.distributed as dist
import felafax_lit.train_torch as tt
from felafax_lit.core import TrainError

def _arg(name): i = sys.argv.index(name); v = sys.argv[i + 1]; del sys.argv[i:i + 2]; return v

kind, message, ranks = _arg('--kind'), _arg('--message'), [int(r) for r in _arg('--fail_ranks').split(',')]
def train(**kw):
    if dist.get_rank() in ranks: raise (getattr(builtins, kind, None) or getattr(tt, kind, TrainError))(message)
    dist.all_reduce(torch.zeros(1))   # ends when a failed rank leaves the group, not after the collective's timeout
    return type('Run', (), {'history': []})()
tt.train = train
tt.main()
