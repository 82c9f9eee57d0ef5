"""What each process runs in the `rank0_only` check of `nbs/05b_quant_torch.ipynb` (a test harness, not library API):
join a gloo group on this machine, load with `load_quantized(..., rank0_only=True)`, and save a digest of the weights."""
import torch
from felafax_lit.quant_torch import load_quantized, quantized_linears

def rank0_check(rank:int, world:int, port:int, paths:list, quant:str|None, out:str):
    "In each of `world` processes: gloo group, `load_quantized(paths[rank], rank0_only=True)`, state digest to `out`."
    torch.distributed.init_process_group('gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=world)
    try:
        m = load_quantized(paths[rank], quant, rank0_only=True, progress=False)
        ts = {n: p.data for n, p in m.named_parameters()}
        for n, l in quantized_linears(m).items():
            if quant == 'nf4': ts[n + '.absmax'] = l.weight.quant_state.absmax
            else: ts.update({n + '.scale': l.meta['scale'], n + '.zero': l.meta['zero']})
        torch.save({k: v.clone() for k, v in ts.items()}, f'{out}/rank{rank}.pt')
    finally: torch.distributed.destroy_process_group()
