"""Peak host memory of loading a checkpoint onto 8 virtual CPU devices: `load_sharded`, or a whole `Trainer`.

Writes a synthetic bf16 Llama checkpoint (random weights, sharded safetensors, >= 2 GB) into a temporary directory, then
loads it in a fresh Python process (XLA_FLAGS=--xla_force_host_platform_device_count=8 set before jax is imported) with
`load_sharded(path, make_mesh('fsdp=8'), FSDP_RULES)`. The child reports its RSS after imports, its peak RSS
(`VmHWM` of /proc/self/status: the high-water mark of this process image; `getrusage`'s ru_maxrss would also carry the
parent's peak across fork + exec) and the bytes of the loaded arrays.
On CPU devices the loaded arrays live in host memory, so the loader's own cost is peak - after-imports - loaded.

With `--trainer lora|qlora` the child builds `train_jax.Trainer(path, TrainConfig(train_type, precision='bf16'), mesh)`
instead (streamed by `load_sharded`), and with `--in_memory` it first reads the whole checkpoint with
`conversion.load_hf` and passes the `(config, params)` pair (the path for models that fit one device). The last line of
output is a JSON record of the measurement.

    python tools/bench_sharded_load.py [--vocab 128256] [--hidden 4096] [--ffn 4096] [--layers 2] [--quantize nf4] [--keep DIR]
    python tools/bench_sharded_load.py --trainer qlora [--in_memory] [--keep DIR]
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

CHILD = r'''
import os, sys, json, time
os.environ['XLA_FLAGS'] = os.environ.get('XLA_FLAGS', '') + ' --xla_force_host_platform_device_count=8'
def rss_mb(): return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
def peak_mb(): return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')) / 1024
import jax
from felafax_lit.sharding import load_sharded, make_mesh, FSDP_RULES
from felafax_lit.train_jax import Trainer
from felafax_lit.training import TrainConfig
from felafax_lit.conversion import load_hf
mesh = make_mesh('fsdp=8'); base = rss_mb(); t0 = time.time(); what = sys.argv[3]
if what == 'load':
    c, params = load_sharded(sys.argv[1], mesh, FSDP_RULES, quantize=sys.argv[2] if sys.argv[2] != 'none' else None)
else:
    tt, src = what.split(':'); tc = TrainConfig(train_type=tt, precision='bf16', batch_size=8)
    tr = Trainer(load_hf(sys.argv[1]) if src == 'memory' else sys.argv[1], tc, mesh=mesh); params = (tr.frozen, tr.trained)
jax.block_until_ready(params); dt = time.time() - t0
loaded = sum(s.data.nbytes for x in jax.tree.leaves(params) for s in x.addressable_shards)
print(json.dumps(dict(seconds=dt, base_mb=base, end_mb=rss_mb(), peak_mb=peak_mb(),
                      loaded_mb=loaded / 2**20)))
'''

def random_bf16(rng, shape):
    "Random bf16 weights straight from random bits (no float32 pass): random sign and mantissa, magnitudes in [2^-7, 2^-6)."
    import numpy as np, ml_dtypes
    bits = np.frombuffer(rng.bytes(2 * int(np.prod(shape))), np.uint16) & 0x807F
    bits |= 0x3C00   # biased exponent 120: 2^-7
    return bits.view(ml_dtypes.bfloat16).reshape(shape)

def write_checkpoint(d:Path, layers:int, D:int, F:int, V:int, N:int=32, K:int=8, shard_mb:int=500) -> dict:
    "A random bf16 Llama checkpoint in `d`, one shard in memory at a time; returns {name: shape}."
    import numpy as np, ml_dtypes
    from safetensors.numpy import save_file
    from felafax_lit.core import LlamaConfig
    LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=F, num_hidden_layers=layers, num_attention_heads=N,
                num_key_value_heads=K, max_position_embeddings=4096).save_pretrained(d)
    H = D // N; shapes = {'model.embed_tokens.weight': (V, D)}
    for i in range(layers):
        p = f'model.layers.{i}.'
        shapes.update({p + 'input_layernorm.weight': (D,), p + 'post_attention_layernorm.weight': (D,),
                       p + 'self_attn.q_proj.weight': (N * H, D), p + 'self_attn.k_proj.weight': (K * H, D),
                       p + 'self_attn.v_proj.weight': (K * H, D), p + 'self_attn.o_proj.weight': (D, N * H),
                       p + 'mlp.gate_proj.weight': (F, D), p + 'mlp.up_proj.weight': (F, D), p + 'mlp.down_proj.weight': (D, F)})
    shapes.update({'model.norm.weight': (D,), 'lm_head.weight': (V, D)})
    rng, groups, cur, size = np.random.default_rng(0), [], {}, 0
    for k, s in shapes.items():
        n = 2 * int(np.prod(s))
        if cur and size + n > shard_mb * 2**20: groups.append(cur); cur, size = {}, 0
        cur[k] = s; size += n
    groups.append(cur); wm = {}
    for j, names in enumerate(groups):
        fn = f'model-{j + 1:05d}-of-{len(groups):05d}.safetensors'
        ts = {k: np.ones(s, ml_dtypes.bfloat16) if len(s) == 1 else random_bf16(rng, s) for k, s in names.items()}
        save_file(ts, str(d/fn), metadata={'format': 'pt'}); wm.update(dict.fromkeys(names, fn)); del ts
    total = 2 * sum(int(np.prod(s)) for s in shapes.values())
    (d/'model.safetensors.index.json').write_text(json.dumps({'metadata': {'total_size': total}, 'weight_map': wm}))
    return shapes

def read_shapes(d:Path) -> dict:
    "{name: shape} of an existing checkpoint, from its safetensors headers."
    out = {}
    for f in sorted(d.glob('*.safetensors')):
        with open(f, 'rb') as fh: n = int.from_bytes(fh.read(8), 'little'); h = json.loads(fh.read(n))
        out.update({k: tuple(v['shape']) for k, v in h.items() if k != '__metadata__'})
    return out

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--vocab', type=int, default=128256); ap.add_argument('--hidden', type=int, default=4096)
    ap.add_argument('--ffn', type=int, default=4096); ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--quantize', default='none', choices=['none', 'nf4']); ap.add_argument('--keep')
    ap.add_argument('--trainer', choices=['lora', 'qlora'], help='build a Trainer instead of calling load_sharded')
    ap.add_argument('--in_memory', action='store_true', help='with --trainer: load_hf first, pass (config, params)')
    a = ap.parse_args()
    d = Path(a.keep or tempfile.mkdtemp(prefix='felafax_bench_')); d.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.time(); shapes = read_shapes(d) if (d/'model.safetensors.index.json').exists() else write_checkpoint(d, a.layers, a.hidden, a.ffn, a.vocab)
        import numpy as np
        sizes = {k: 2 * int(np.prod(s)) for k, s in shapes.items()}
        total, largest = sum(sizes.values()) / 2**20, max(sizes.values()) / 2**20
        print(f"checkpoint: {total:.0f} MB bf16 in {len(list(d.glob('*.safetensors')))} files (written in {time.time() - t0:.0f} s), "
              f"largest tensor {largest:.0f} MB ({max(sizes, key=sizes.get)})")
        what = 'load' if not a.trainer else f"{a.trainer}:{'memory' if a.in_memory else 'stream'}"
        r = subprocess.run([sys.executable, '-c', CHILD, str(d), a.quantize, what], capture_output=True, text=True, timeout=3600)
        if r.returncode: sys.exit(r.stderr[-3000:])
        m = json.loads(r.stdout.strip().splitlines()[-1])
        extra = m['peak_mb'] - m['base_mb'] - m['loaded_mb']; goal = 3 * largest + 500
        print(f"{what} (fsdp=8, quantize={a.quantize}): {m['seconds']:.1f} s; RSS after imports {m['base_mb']:.0f} MB, "
              f"loaded arrays {m['loaded_mb']:.0f} MB, peak RSS {m['peak_mb']:.0f} MB, end RSS {m['end_mb']:.0f} MB")
        print(f"peak above imports and loaded arrays: {extra:.0f} MB = {extra / largest:.2f} x largest tensor")
        print(f"goal peak RSS < 3 x largest + 500 MB = {goal:.0f} MB: {'met' if m['peak_mb'] < goal else 'NOT met'} (peak {m['peak_mb']:.0f} MB)")
        print(json.dumps(dict(m, what=what, checkpoint_mb=total, largest_mb=largest, extra_mb=extra)))
    finally:
        if not a.keep: shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__': main()
