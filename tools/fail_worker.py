"""A torchrun worker that loses a rank on purpose, for the dead-rank test of `nbs/08b_train_torch.ipynb`.

Rank `--fail_rank` trains up to `--fail_step` and exits abruptly (exit code 17); the other ranks run the whole of
`felafax_lit.train_torch.train` and must fail at their next collective instead of hanging."""
import json, os, sys
from datetime import timedelta
from pathlib import Path
import torch.distributed as dist
from fastcore.script import call_parse
from felafax_lit.train_torch import train

@call_parse
def main(config:str, # JSON file written by `launch_train`: a list of keyword arguments of `train`
         out:str=None, # unused (accepted like the library worker's)
         fail_rank:int=1, # the rank that exits
         fail_step:int=1, # after this step
         timeout:float=30): # seconds a collective may wait for the other ranks
    dist.init_process_group('gloo', timeout=timedelta(seconds=timeout))
    try:
        kw = json.loads(Path(config).read_text())[0]
        if dist.get_rank() == fail_rank:
            train(**{**kw, 'until': fail_step, 'export': False, 'progress': False, 'output_dir': None})
            print(f"rank {fail_rank}: exiting on purpose after step {fail_step}", file=sys.stderr, flush=True); os._exit(17)
        train(**kw)
    finally: dist.destroy_process_group()
