#!/usr/bin/env python
"""Throughput of the JAX train step (felafax_lit.train_jax) on an accelerator: LoRA and QLoRA over random weights.

    python tools/gpu_train_bench.py                      # Llama 3.1 8B shapes, batch 4 x 2048, remat full, bf16
    python tools/gpu_train_bench.py --preset tiny --batch 2 --seq 128 --steps 3   # CPU smoke test

MFU counts model FLOPs only (no rematerialisation), per trained token:
    LoRA/QLoRA: 4*N + 12*L*T*D   (forward 2N, backward through the frozen base 2N: activation gradients only, no weight
                                  gradients; attention scores and values: forward 4*L*T*D, backward 8*L*T*D)
    full:       6*N + 12*L*T*D
with N = parameters taking part in matmuls (all but the embedding table; the tied head counts once as a matmul),
L layers, T sequence length, D = num_attention_heads * head_dim. Adapter FLOPs (r << D) are ignored.
MFU = tokens/s * FLOPs/token / peak, peak = --peak_tflops (default 989: H100/H200 dense bf16).
"""
import argparse, math, time
import numpy as np
import jax, jax.numpy as jnp
from felafax_lit.core import preset, tiny_config, num_params, LoRAConfig
from felafax_lit.model import Llama
from felafax_lit.train_jax import TrainConfig, prepare, make_optimizer, make_train_step, init_state, default_mesh, state_sharding, batch_sharding, sharding_rules
from felafax_lit.sharding import named_shardings
from jax.sharding import NamedSharding, PartitionSpec as P

def random_params(c, dtype, seed=0):
    "Random weights of config `c` straight on the device (no host copy), norm scales 1."
    shapes = jax.eval_shape(Llama(c).init, jax.random.key(0), jnp.zeros((1, 8), jnp.int32))['params']
    leaves, tdef = jax.tree_util.tree_flatten_with_path(shapes); keys = jax.random.split(jax.random.key(seed), len(leaves))
    out = [jnp.ones(s.shape, dtype) if 'scale' in jax.tree_util.keystr(p) else
           jax.jit(lambda k, s=s: (0.02 * jax.random.normal(k, s.shape, jnp.float32)).astype(dtype))(k) for (p, s), k in zip(leaves, keys)]
    return jax.tree_util.tree_unflatten(tdef, out)

def flops_per_token(c, T, train_type):
    n = num_params(c) - c.vocab_size * c.hidden_size + (c.vocab_size * c.hidden_size if c.tie_word_embeddings else 0)
    return (6 if train_type == 'full' else 4) * n + 12 * c.num_hidden_layers * T * c.q_dim

def bench(c, train_type, batch, seq, steps, remat, precision, rank, peak):
    tc = TrainConfig(train_type=train_type, batch_size=batch, context_length=seq, lr=1e-4, max_steps=steps + 1, remat=remat, precision=precision)
    dtype = jnp.bfloat16 if precision == 'bf16' else jnp.float32
    t0 = time.time(); params = random_params(c, dtype)
    model, frozen, trained = prepare(c, params, tc, LoRAConfig(rank=rank), jax.random.key(1)); del params
    opt = make_optimizer(tc, steps + 1); state = init_state(trained, opt, 0); mesh = default_mesh()
    sh = state_sharding(state, opt, mesh); fsh = named_shardings(frozen, mesh, sharding_rules(mesh)); frozen = jax.device_put(frozen, fsh)
    fn = jax.jit(make_train_step(model, train_type, opt), in_shardings=(sh, fsh, batch_sharding(mesh)),
                 out_shardings=(sh, NamedSharding(mesh, P())), donate_argnums=0)
    r = np.random.default_rng(0); toks = r.integers(0, c.vocab_size, (1, batch, seq + 1)).astype(np.int32)
    b = {'tokens': toks[..., :-1], 'targets': toks[..., 1:], 'positions': np.broadcast_to(np.arange(seq, dtype=np.int32), (1, batch, seq)).copy(),
         'segment_ids': np.ones((1, batch, seq), np.int32), 'loss_mask': np.ones((1, batch, seq), np.int32)}
    b = jax.device_put(b, batch_sharding(mesh)); state = jax.device_put(state, sh)
    state, m = fn(state, frozen, b); jax.block_until_ready(m); setup = time.time() - t0
    t = time.time()
    for _ in range(steps): state, m = fn(state, frozen, b)
    jax.block_until_ready(m); dt = (time.time() - t) / steps
    tps = batch * seq / dt; mfu = tps * flops_per_token(c, seq, train_type) / (peak * 1e12)
    mem = jax.devices()[0].memory_stats() or {}
    print(f"{train_type:5s} r={rank} {precision} remat={remat} batch {batch}x{seq}: {dt * 1e3:.0f} ms/step, {tps:,.0f} tokens/s, "
          f"MFU {100 * mfu:.1f}% (FLOPs/token {flops_per_token(c, seq, train_type) / 1e9:.2f} G), loss {float(m['loss']):.3f}, "
          f"peak mem {mem.get('peak_bytes_in_use', 0) / 2**30:.1f} GiB, setup+compile {setup:.0f} s", flush=True)

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--preset', default='llama3.1-8b', help="a felafax_lit.core preset name, or 'tiny'")
    p.add_argument('--train_types', default='lora,qlora'); p.add_argument('--batch', type=int, default=4)
    p.add_argument('--seq', type=int, default=2048); p.add_argument('--steps', type=int, default=5)
    p.add_argument('--remat', default='full'); p.add_argument('--precision', default='bf16')
    p.add_argument('--rank', type=int, default=16); p.add_argument('--peak_tflops', type=float, default=989.0)
    a = p.parse_args()
    c = tiny_config() if a.preset == 'tiny' else preset(a.preset)
    print(jax.devices(), f"{a.preset}: {num_params(c) / 1e9:.2f} B params", flush=True)
    for tt in a.train_types.split(','): bench(c, tt, a.batch, a.seq, a.steps, a.remat, a.precision, a.rank, a.peak_tflops)
