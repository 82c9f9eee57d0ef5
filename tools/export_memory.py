#!/usr/bin/env python
"""Peak memory of the trainers' merged export, streamed (`Trainer.save_merged`) against the whole merged model built
first (PyTorch: `save_hf_dir(merged_state_dict(model))`; JAX: `save_hf` of `merged_params()` brought to the host),
on SmolLM2-135M, each in a fresh process (JAX on the CPU, where the devices' memory is the process's):

    python tools/export_memory.py                   # both backends, qlora and lora, both ways, twice
    python tools/export_memory.py torch lora streamed

Prints the peak resident memory above the level before the export (sampled every 2 ms from /proc/self/statm). Every
weight is read once before measuring, as training has, so that pages read in from the model file are not counted.
"""
import os, subprocess, sys, tempfile, threading, time

def rss() -> int: return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')

def peak_above(f) -> float:
    "Peak RSS above the level before, in MiB, while `f()` runs."
    base, top, stop = rss(), [0], threading.Event()
    def watch():
        while not stop.is_set(): top[0] = max(top[0], rss()); time.sleep(0.002)
    th = threading.Thread(target=watch); th.start()
    try: f()
    finally: stop.set(); th.join()
    return (top[0] - base) / 2**20

def one_jax(train_type:str, way:str, shard_mib:int=64):
    import gc, jax, numpy as np
    from felafax_lit.core import real_model_dir, LoRAConfig
    from felafax_lit.training import TrainConfig
    from felafax_lit.train_jax import Trainer, _host
    from felafax_lit.conversion import save_hf, iter_hf_tensors
    t = Trainer(real_model_dir(), TrainConfig(train_type=train_type, batch_size=2, context_length=64, max_steps=1, seed=0),
                LoRAConfig(rank=8))
    size = sum(v.nbytes for _, v in iter_hf_tensors(t.merged_params(), t.config, np.float32)) / 2**20   # compiles too
    gc.collect()
    with tempfile.TemporaryDirectory() as d:
        if way == 'streamed':
            t.save_merged(f'{d}/warm', max_shard_size=shard_mib << 20)   # compiles the per-layer merge
            f = lambda: t.save_merged(f'{d}/m', max_shard_size=shard_mib << 20)
        else: f = lambda: save_hf(jax.tree.map(_host, t.merged_params()), t.config, d, shard_mib << 20, np.float32)
        gc.collect()
        print(f"jax   {train_type:6s} {way:9s} peak RSS above before: {peak_above(f):5.0f} MiB "
              f"(merged model in float32: {size:.0f} MiB, shards of {shard_mib} MiB)", flush=True)

def one(train_type:str, way:str, shard_mib:int=64):
    import gc
    from felafax_lit.core import real_model_dir, LoRAConfig
    from felafax_lit.training import TrainConfig
    from felafax_lit.train_torch import Trainer, merged_tensors, merged_state_dict, save_hf_dir
    t = Trainer(real_model_dir(), TrainConfig(train_type=train_type, batch_size=2, context_length=64, max_steps=1, seed=0),
                LoRAConfig(rank=8), device='cpu')
    size = sum(v.nbytes for _, v in merged_tensors(t.model)) / 2**20   # also reads every weight once
    gc.collect()
    with tempfile.TemporaryDirectory() as d:
        if way == 'streamed': f = lambda: t.save_merged(f'{d}/m', max_shard_size=shard_mib << 20)
        else: f = lambda: save_hf_dir(merged_state_dict(t.model), t.config, d, max_shard_size=shard_mib << 20)
        print(f"torch {train_type:6s} {way:9s} peak RSS above before: {peak_above(f):5.0f} MiB "
              f"(merged model in float32: {size:.0f} MiB, shards of {shard_mib} MiB)", flush=True)

if __name__ == '__main__':
    if len(sys.argv) == 4: (one_jax if sys.argv[1] == 'jax' else one)(*sys.argv[2:])
    else:
        for _ in range(2):
            for backend in ('torch', 'jax'):
                for tt in ('qlora', 'lora'):
                    for way in ('whole', 'streamed'):
                        subprocess.run([sys.executable, __file__, backend, tt, way], stderr=subprocess.DEVNULL,
                                       env={**os.environ, 'OMP_NUM_THREADS': '1'})
