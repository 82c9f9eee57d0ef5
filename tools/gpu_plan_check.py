"""Check `felafax_lit.sharding.plan` against a real GPU: plan a LoRA training step for one device, run it, compare.

Plans the step (abstract inputs, nothing allocated; on a GPU the plan is XLA:GPU's own buffer assignment), then builds
random bf16 weights of the same model on the GPU (or NF4 with --quant nf4), runs a few steps of the same jitted
`make_lora_step`, and prints planned bytes beside `jax.devices()[0].memory_stats()` (bytes in use before the step,
peak bytes in use after it). Pass --cpu-plan-gb to print the CPU-compiled plan's figure (from the 03_sharding notebook or
`plan(...)` run on a CPU host with 1 device) next to it.

    python tools/gpu_plan_check.py [--model llama3.1-8b] [--batch 8] [--seq 2048] [--remat full] [--quant nf4] [--cpu-plan-gb X]

Needs jax with a GPU backend, flax, optax, safetensors and fastcore (felafax_lit.core uses fastcore.basics.patch).
"""
import argparse, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np
import jax, jax.numpy as jnp, optax
from felafax_lit.core import preset, LoRAConfig, LORA_TARGETS_DEFAULT
from felafax_lit.lora import lora_model, init_lora
from felafax_lit.sharding import plan, make_mesh, make_lora_step, abstract_params, quantize_params, FSDP_TP_RULES, BATCH_KEYS

GB = 1e9

def random_params(c, key):
    "Random bf16 weights of the shapes of `c`, made on the device leaf by leaf (norm scales 1)."
    shapes = abstract_params(c, jnp.bfloat16)
    leaves, tree = jax.tree.flatten_with_path(shapes)
    out = []
    for i, (kp, s) in enumerate(leaves):
        name = jax.tree_util.keystr(kp)
        make = jax.jit(lambda k, s=s, name=name: jnp.ones(s.shape, s.dtype) if 'scale' in name else
                       (jax.random.normal(k, s.shape, s.dtype) * 0.02).astype(s.dtype))
        out.append(make(jax.random.fold_in(key, i)).block_until_ready())
    return jax.tree.unflatten(tree, out)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model', default='llama3.1-8b'); ap.add_argument('--batch', type=int, default=8)
    ap.add_argument('--seq', type=int, default=2048); ap.add_argument('--remat', default='full')
    ap.add_argument('--quant', choices=['nf4'], default=None); ap.add_argument('--rank', type=int, default=8)
    ap.add_argument('--lm-head', action='store_true', help='adapt lm_head too (Felafax setting)')
    ap.add_argument('--steps', type=int, default=3); ap.add_argument('--cpu-plan-gb', type=float)
    a = ap.parse_args()
    dev = jax.devices()[0]; print(f"device: {dev.device_kind} ({dev.platform}), jax {jax.__version__}")
    c = preset(a.model); lc = LoRAConfig(rank=a.rank, targets=LORA_TARGETS_DEFAULT + ('|lm_head' if a.lm_head else ''))
    mesh = make_mesh('fsdp=1', [dev]); limit = (dev.memory_stats() or {}).get('bytes_limit')
    t0 = time.time(); p = plan(c, lc, mesh, a.batch, a.seq, a.remat, a.quant, device_memory=limit)
    print(f"plan ({time.time() - t0:.0f} s): weights {p.weights/GB:.2f} GB, lora+opt {p.lora_opt/GB:.3f} GB, argument {p.argument/GB:.2f} GB, "
          f"temp {p.temp/GB:.2f} GB, output {p.output/GB:.3f} GB, alias {p.alias/GB:.3f} GB -> peak {p.peak/GB:.2f} GB "
          f"(device limit {limit/GB if limit else float('nan'):.1f} GB, fits: {p.fits})")
    model = lora_model(c, lc, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16, remat=a.remat)
    params = random_params(c, jax.random.key(0))
    if a.quant == 'nf4': params = jax.block_until_ready(quantize_params(params))
    lora = init_lora(model, params, jax.random.key(1)); opt = optax.adamw(1e-4); state = opt.init(lora)
    rng = np.random.default_rng(0); toks = rng.integers(0, c.vocab_size, (a.batch, a.seq)).astype(np.int32)
    batch = jax.device_put(dict(tokens=toks, targets=np.roll(toks, -1, 1), positions=np.tile(np.arange(a.seq, dtype=np.int32), (a.batch, 1)),
                                segment_ids=np.ones_like(toks), loss_mask=np.ones_like(toks)), dev)
    step = make_lora_step(model, opt, mesh, FSDP_TP_RULES, params, lora)
    jax.block_until_ready((params, lora, state, batch)); before = dev.memory_stats() or {}
    for i in range(a.steps):
        t0 = time.time(); lora, state, loss = step(lora, state, params, batch, jax.random.key(i)); loss = float(loss)
        print(f"step {i}: loss {loss:.4f}, {time.time() - t0:.2f} s")
    after = dev.memory_stats()
    if not after: print("this device reports no memory_stats() (CPU): nothing to compare"); return
    print(f"measured: bytes in use before the step {before['bytes_in_use']/GB:.2f} GB (planned argument {p.argument/GB:.2f} GB); "
          f"peak bytes in use {after['peak_bytes_in_use']/GB:.2f} GB (planned peak {p.peak/GB:.2f} GB"
          + (f", CPU plan {a.cpu_plan_gb:.2f} GB" if a.cpu_plan_gb else '') + ")")
    print("note: the peak also covers weight generation before the step; it is the step's peak when that is the larger")

if __name__ == '__main__': main()
