"""Peak host memory of loading a ~2.3 GB Llama checkpoint: plain `from_pretrained` vs `felafax_lit.quant_torch.load_quantized`.

Writes a synthetic checkpoint (random bf16 weights, sharded safetensors) into a temporary directory, then loads it in a
fresh Python process per method; each child reports its own peak RSS (`resource.getrusage(RUSAGE_SELF).ru_maxrss`) and
its RSS right after imports. Prints a table and deletes the checkpoint.

    python tools/bench_lowmem_load.py [--vocab 128256] [--hidden 4096] [--ffn 4096] [--layers 2] [--shard-mb 500] [--keep DIR]

The default shape (Llama 3 vocabulary and width, untied head, 2 narrow-FFN layers: 2.47 GB, 15% of it in the 14
decoder projections) keeps HQQ's CPU quantization (about a microsecond of CPU per weight) to minutes on a 2-core
machine; raise --layers/--ffn where there are cores to spare.
"""
import argparse, json, os, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import resource, sys, time, json, os
def rss_mb(): return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
import torch
from transformers import LlamaForCausalLM
from felafax_lit.quant_torch import load_quantized, model_nbytes
base = rss_mb(); method, path = sys.argv[1], sys.argv[2]
t0 = time.time()
if method == 'from_pretrained': m = LlamaForCausalLM.from_pretrained(path, dtype=torch.bfloat16)
else: m = load_quantized(path, None if method == 'none' else method, torch.bfloat16, progress=False)
dt = time.time() - t0
peak_load = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# weights read through a file mapping are only resident once touched: touch one element per 2 KB of every tensor
for t in [*m.parameters(), *m.buffers()]: t.detach().reshape(-1)[::1024].float().sum()
print(json.dumps(dict(method=method, seconds=dt, base_mb=base, peak_load_mb=peak_load, end_mb=rss_mb(),
                      peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, model_mb=model_nbytes(m) / 2**20)))
'''

WRITER = r'''
import sys; from pathlib import Path
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, str(Path(sys.argv[1])/'tools'))
from bench_lowmem_load import write_checkpoint
print(*write_checkpoint(Path(sys.argv[2]), *map(int, sys.argv[3:])))
'''

def write_checkpoint(d:Path, layers:int, shard_mb:int, D:int=4096, F:int=4096, V:int=128256, N:int=32, K:int=8):
    "A random bf16 Llama checkpoint in `d`, written shard by shard (never more than one shard in memory)."
    import torch
    from safetensors.torch import save_file
    from felafax_lit.core import LlamaConfig
    cfg = LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=F, num_hidden_layers=layers, num_attention_heads=N,
                      num_key_value_heads=K, max_position_embeddings=4096)
    cfg.save_pretrained(d)
    H = D // N
    shapes = {'model.embed_tokens.weight': (V, D)}
    for i in range(layers):
        p = f'model.layers.{i}.'
        shapes.update({p + 'input_layernorm.weight': (D,), p + 'post_attention_layernorm.weight': (D,),
                       p + 'self_attn.q_proj.weight': (N * H, D), p + 'self_attn.k_proj.weight': (K * H, D),
                       p + 'self_attn.v_proj.weight': (K * H, D), p + 'self_attn.o_proj.weight': (D, N * H),
                       p + 'mlp.gate_proj.weight': (F, D), p + 'mlp.up_proj.weight': (F, D), p + 'mlp.down_proj.weight': (D, F)})
    shapes.update({'model.norm.weight': (D,), 'lm_head.weight': (V, D)})
    g = torch.Generator().manual_seed(0)
    shards, cur, size = [], {}, 0
    for k, s in shapes.items():
        n = 2 * torch.Size(s).numel()
        if cur and size + n > shard_mb * 2**20: shards.append(cur); cur, size = {}, 0
        cur[k] = s; size += n
    shards.append(cur)
    wm, total = {}, 0
    for j, names in enumerate(shards):
        fn = f'model-{j + 1:05d}-of-{len(shards):05d}.safetensors'
        ts = {k: (torch.ones(s) if len(s) == 1 else torch.randn(s, generator=g) * 0.02).bfloat16() for k, s in names.items()}
        save_file(ts, d/fn, metadata={'format': 'pt'}); wm.update({k: fn for k in ts})
        total += sum(t.numel() * 2 for t in ts.values()); del ts
    (d/'model.safetensors.index.json').write_text(json.dumps({'metadata': {'total_size': total}, 'weight_map': wm}))
    return total, len(shards)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--vocab', type=int, default=128256)
    ap.add_argument('--hidden', type=int, default=4096)
    ap.add_argument('--ffn', type=int, default=4096)
    ap.add_argument('--shard-mb', type=int, default=500)
    ap.add_argument('--keep', help='write the checkpoint here and keep it')
    ap.add_argument('--methods', default='from_pretrained,none,nf4,hqq')
    a = ap.parse_args()
    d = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix='lowmem_ckpt_'))
    d.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, 'PYTHONPATH': str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', '')}
    try:  # written by a child: Linux children inherit the parent's ru_maxrss, so the parent must stay small
        t0 = time.time()
        r = subprocess.run([sys.executable, '-c', WRITER, str(ROOT), str(d), str(a.layers), str(a.shard_mb), str(a.hidden),
                            str(a.ffn), str(a.vocab)], env=env, capture_output=True, text=True, check=True)
        total, n = map(int, r.stdout.split()[-2:])
        print(f'checkpoint: {total / 2**30:.2f} GiB bf16 in {n} shards ({time.time() - t0:.0f} s to write)', flush=True)
        rows = []
        for m in a.methods.split(','):
            r = subprocess.run([sys.executable, '-c', CHILD, m, str(d)], env=env, capture_output=True, text=True)
            line = [l for l in r.stdout.splitlines() if l.startswith('{')]
            if r.returncode or not line: print(f'{m} failed:\n{r.stderr[-3000:]}'); continue
            rows.append(json.loads(line[-1])); print(rows[-1], flush=True)
        print(f"\nparent ru_maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (children start from it)")
        print(f"\n{'method':26} {'load s':>7} {'peak RSS MB':>12} {'peak in load':>13} {'after import':>13} {'peak-import':>12} {'model MB':>9}")
        label = {'from_pretrained': 'from_pretrained(bf16)', 'none': 'load_quantized(None)',
                 'nf4': "load_quantized('nf4')", 'hqq': "load_quantized('hqq')"}
        for r in rows:
            print(f"{label[r['method']]:26} {r['seconds']:7.1f} {r['peak_mb']:12.0f} {r['peak_load_mb']:13.0f} {r['base_mb']:13.0f} "
                  f"{r['peak_mb'] - r['base_mb']:12.0f} {r['model_mb']:9.0f}")
    finally:
        if not a.keep: shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__': main()
