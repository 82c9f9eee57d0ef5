"""The torchrun worker of `nbs/06_fsdp.ipynb`'s two-process checks (a test harness, not library API).

`train_losses` takes a few AdamW steps of LoRA/QLoRA on fixed token batches, each rank on its slice of every batch,
sharded with FSDP2 when a process group is up; `main` runs it per quantization under torchrun and writes rank 0's
result. `--fail_rank` makes one rank exit abruptly after its first run, to check that the others do not hang."""
import json, os, sys
from datetime import timedelta
from pathlib import Path
import torch
import torch.distributed as dist
from fastcore.script import call_parse
from felafax_lit.core import LoRAConfig
from felafax_lit.fsdp import add_lora, shard_model, grad_norm
from felafax_lit.quant_torch import load_quantized

def fixed_batches(steps:int=3, batch:int=4, seqlen:int=16, vocab:int=256, seed:int=0) -> torch.Tensor:
    "Deterministic token batches [steps, batch, seqlen] (ids >= 3, clear of special tokens)."
    return torch.randint(3, vocab, (steps, batch, seqlen), generator=torch.Generator().manual_seed(seed))

def train_losses(model_dir:str, quant:str|None=None, cfg:LoRAConfig=LoRAConfig(rank=4), steps:int=3, lr:float=1e-2,
                 seed:int=0, shard:bool=False) -> dict:
    "Per-step training losses (mean over ranks) and gradient norms of LoRA/QLoRA on fixed data, sharded or not."
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    model = load_quantized(model_dir, quant, compute_dtype=torch.float32, progress=False).train()
    torch.manual_seed(seed); add_lora(model, cfg)
    if shard: shard_model(model)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr)
    data, losses, norms = fixed_batches(steps, vocab=model.config.vocab_size, seed=seed), [], []
    for b in data:
        n = len(b) // world; b = b[rank * n:(rank + 1) * n]
        loss = model(input_ids=b, labels=b).loss
        loss.backward(); norms.append(grad_norm(params)); opt.step(); opt.zero_grad()
        l = loss.detach().clone()
        if world > 1: dist.all_reduce(l); l /= world
        losses.append(l.item())
    return {'loss': losses, 'grad_norm': norms}

@call_parse
def main(model_dir:str, # HF model directory
         quants:str='none,nf4,hqq', # comma-separated quantizations to run one after the other
         steps:int=3, # AdamW steps
         out:str=None, # rank 0 writes {quant: losses} here as JSON
         timeout:float=60, # seconds a collective may wait for the other ranks
         fail_rank:int=-1): # this rank exits abruptly after its first quantization's run
    dist.init_process_group('gloo', timeout=timedelta(seconds=timeout))
    try:
        rank, world, res = dist.get_rank(), dist.get_world_size(), {}
        for q in quants.split(','):
            if fail_rank == rank and res:
                print(f"rank {rank}: exiting on purpose (fail_rank)", file=sys.stderr, flush=True); os._exit(17)
            res[q] = train_losses(model_dir, None if q == 'none' else q, steps=steps, shard=True)
        if rank == 0 and out: Path(out).write_text(json.dumps({'world': world, 'losses': res}))
    finally: dist.destroy_process_group()
