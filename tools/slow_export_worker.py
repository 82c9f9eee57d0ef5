"""A torchrun worker whose exports start 60 s late, for the test of a stop while exporting in `nbs/08b_train_torch.ipynb`.

It is `felafax_lit.train_torch`'s own worker (`main`, with its notes to `--out`), with `Trainer.save_adapter` made to wait
first, so that a signal sent once rank 0 notes that it is exporting reaches the ranks while they export."""
import time
from felafax_lit import train_torch

_save_adapter = train_torch.Trainer.save_adapter
def _late(self, *a, **kw): time.sleep(60); return _save_adapter(self, *a, **kw)
train_torch.Trainer.save_adapter = _late
train_torch.main()
