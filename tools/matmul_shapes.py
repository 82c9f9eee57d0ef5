#!/usr/bin/env python
"""bf16 matmul FLOP rates of XLA:CPU and PyTorch at the shapes a SmolLM2-135M step multiplies, next to the 2048-square
product the benchmark's ceilings (`bench._matmul`) time:

    python tools/matmul_shapes.py              # 4 x 256 tokens, the benchmark's batch
    python tools/matmul_shapes.py --tokens 512

Each product `[tokens, K] @ [K, N]` is timed with the weight as stored (`W`, [K, N]) and transposed (`W^T`, [N, K]
contracted on its last dimension, as `nn.Linear` stores it); XLA's with a float32 result (what the model's products
return) and a bf16 one. Prints the median of 30 timed calls after one untimed, in TFLOP/s.
"""
import argparse, time
import numpy as np

def rate(f, args, flops, reps=30) -> float:
    "Median TFLOP/s of `f(*args)` (`flops` per call)."
    f(*args); ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); r = f(*args)
        if hasattr(r, 'block_until_ready'): r.block_until_ready()
        ts.append(time.perf_counter() - t0)
    return flops / float(np.median(ts)) / 1e12

def main(tokens:int):
    import jax, jax.numpy as jnp, torch
    from felafax_lit.core import LlamaConfig, real_model_dir
    c = LlamaConfig.from_pretrained(real_model_dir())
    D, F, KV = c.hidden_size, c.intermediate_size, c.num_key_value_heads * c.head_dim
    shapes = [(tokens, D, D, 'q/o'), (tokens, D, KV, 'k/v'), (tokens, D, F, 'gate/up'), (tokens, F, D, 'down'),
              (tokens, D, c.vocab_size, 'head'), (2048, 2048, 2048, 'ceiling')]
    xla = {k: jax.jit(lambda a, b, e=e, t=t: jnp.einsum(e, a, b, preferred_element_type=t))
           for k, e, t in (('W', 'mk,kn->mn', jnp.float32), ('W^T', 'mk,nk->mn', jnp.float32),
                           ('bf16', 'mk,kn->mn', None))}
    print(f"{'product':26s} {'':8s} {'XLA f32 W':>10s} {'XLA f32 W^T':>12s} {'XLA bf16 W':>11s} "
          f"{'torch W':>8s} {'torch W^T':>10s}  TFLOP/s")
    ins = []
    for m, k, n, what in shapes:
        a = jax.random.normal(jax.random.key(0), (m, k), jnp.bfloat16)
        b = jax.random.normal(jax.random.key(1), (k, n), jnp.bfloat16)
        tb = torch.randn(k, n, dtype=torch.bfloat16)
        ins.append((a, b, jnp.asarray(b.T), torch.randn(m, k, dtype=torch.bfloat16), tb, tb.t().contiguous()))
    fl = [2 * m * k * n for m, k, n, _ in shapes]
    # every input made first, then every XLA product, then every torch one, each straight after the one before: on
    # a 2-core Zen 5 EPYC, XLA's small products timed after a pause (making the next inputs, or a second idle) ran
    # at about half their rate
    rx = [[rate(xla['W'], (a, b), f), rate(xla['W^T'], (a, bt), f), rate(xla['bf16'], (a, b), f)]
          for (a, b, bt, *_), f in zip(ins, fl)]
    rt = [[rate(torch.matmul, (ta, tb), f), rate(lambda x, y: x @ y.t(), (ta, tbt), f)]
          for (*_, ta, tb, tbt), f in zip(ins, fl)]
    for (m, k, n, what), r in zip(shapes, (x + t for x, t in zip(rx, rt))):
        print(f"{f'[{m},{k}] @ [{k},{n}]':26s} {what:8s} {r[0]:10.3f} {r[1]:12.3f} {r[2]:11.3f} {r[3]:8.3f} "
              f"{r[4]:10.3f}", flush=True)

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--tokens', type=int, default=1024, help='rows of each product (default: %(default)s)')
    main(p.parse_args().tokens)
