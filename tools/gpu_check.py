#!/usr/bin/env python
"""The JAX Trainer on an accelerator: bf16 LoRA and NF4 QLoRA over random weights, measured against the plan.

    python tools/gpu_check.py                                   # Llama 3.1 8B shapes, batch 4 x 2048, remat full
    python tools/gpu_check.py --preset tiny --seq 128 --steps 3 --force   # a CPU smoke test of the script itself

On a machine without an accelerator it prints why and exits 0 (unless --force). For each train type it plans the step
with `felafax_lit.planner.plan` (the Trainer's own program, compiled from shapes), builds a `Trainer` over random
weights made on the device (the `(config, params)` path; an 8B checkpoint on disk would only add minutes of writing),
runs `--steps` steps with `fit`, and reports tokens/s and MFU (median of the steps after the first, which compiles;
model FLOPs 4N per token, `core.train_flops_per_token`) and the device's peak memory beside the plan's prediction.
Everything goes to a JSON file (--out).
"""
import argparse, json, sys, time
import numpy as np
import jax, jax.numpy as jnp
from felafax_lit.core import preset, tiny_config, LoRAConfig, peak_flops
from felafax_lit.model import Llama
from felafax_lit.data import TokenDataset
from felafax_lit.train_jax import Trainer, default_mesh
from felafax_lit.training import TrainConfig
from felafax_lit.planner import plan

def random_params(c, dtype, seed=0):
    "Random weights of config `c` made on the device, leaf by leaf (no host copy), norm scales 1."
    shapes = jax.eval_shape(Llama(c).init, jax.random.key(0), jnp.zeros((1, 8), jnp.int32))['params']
    leaves, tdef = jax.tree_util.tree_flatten_with_path(shapes); keys = jax.random.split(jax.random.key(seed), len(leaves))
    out = [jnp.ones(s.shape, dtype) if 'scale' in jax.tree_util.keystr(p) else
           jax.jit(lambda k, s=s: (0.02 * jax.random.normal(k, s.shape, jnp.float32)).astype(dtype))(k) for (p, s), k in zip(leaves, keys)]
    return jax.tree_util.tree_unflatten(tdef, out)

def random_rows(c, n, T, seed=0):
    r, ds = np.random.default_rng(seed), TokenDataset()
    for i in range(n):
        ds.ids.append(r.integers(3, c.vocab_size, T + 1).astype(np.int32)); ds.mask.append(np.ones(T + 1, np.int8))
        ds.src.append(i); ds.where.append(str(i))
    return ds

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--preset', default='llama3.1-8b'); ap.add_argument('--batch', type=int, default=4)
    ap.add_argument('--seq', type=int, default=2048); ap.add_argument('--steps', type=int, default=6)
    ap.add_argument('--remat', default='full'); ap.add_argument('--rank', type=int, default=16)
    ap.add_argument('--train_types', default='lora,qlora'); ap.add_argument('--out', default='gpu_check.json')
    ap.add_argument('--force', action='store_true', help='run even without an accelerator')
    a = ap.parse_args()
    dev = jax.devices()[0]
    if dev.platform == 'cpu' and not a.force: print(f"gpu_check: no accelerator (JAX sees {dev.device_kind}); skipped"); return
    c = tiny_config() if a.preset == 'tiny' else preset(a.preset); mesh = default_mesh()
    res = {'device': dev.device_kind, 'devices': jax.device_count(), 'preset': a.preset, 'batch': a.batch, 'seq': a.seq, 'runs': {}}
    for tt in a.train_types.split(','):
        tc = TrainConfig(train_type=tt, batch_size=a.batch, context_length=a.seq, precision='bf16', remat=a.remat,
                         max_steps=a.steps, lr=1e-4, log_steps=1)
        lc = LoRAConfig(rank=a.rank, alpha=2.0 * a.rank)
        t0 = time.time(); pl = plan(c, tc, lc, mesh, total_steps=a.steps); plan_s = time.time() - t0
        params = random_params(c, jnp.bfloat16)
        tr = Trainer((c, params), tc, lc, mesh=mesh); del params
        hist = tr.fit(random_rows(c, a.batch * a.steps, a.seq), progress=False)
        steps = [r for r in hist if 'tokens_per_s' in r][1:]
        stats = dev.memory_stats() or {}
        run = dict(tokens_per_s=float(np.median([r['tokens_per_s'] for r in steps])),
                   mfu=float(np.median([r['mfu'] for r in steps])) if steps and steps[0].get('mfu') else None,
                   peak_device_bytes=stats.get('peak_bytes_in_use'), planned_peak_bytes=pl.peak, planned_temp_bytes=pl.temp,
                   plan_compile_s=plan_s, losses=[r['loss'] for r in hist if 'loss' in r])
        res['runs'][tt] = run; print(tt, json.dumps(run), flush=True)
        del tr; jax.clear_caches()
    open(a.out, 'w').write(json.dumps(res, indent=1)); print(f"wrote {a.out}")

if __name__ == '__main__': main()
