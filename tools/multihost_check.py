#!/usr/bin/env python
"""Multi-process check of the JAX Trainer: every process runs the same `Trainer.fit` over one global mesh.

    # on each of N hosts (process_id 0..N-1), like torchrun's --nnodes/--node_rank/--master_addr:
    python tools/multihost_check.py --coordinator HOST0:1234 --num_processes N --process_id I --mesh fsdp=-1
    # or with the variables jax.distributed reads (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID), SLURM or MPI:
    python tools/multihost_check.py --distributed --mesh fsdp=-1
    # on one machine: two processes with 4 virtual CPU devices each (gloo collectives)
    python tools/multihost_check.py --coordinator 127.0.0.1:1234 --num_processes 2 --process_id 0 --cpu_devices 4 --mesh dp=2,fsdp=2,tp=2 &
    python tools/multihost_check.py --coordinator 127.0.0.1:1234 --num_processes 2 --process_id 1 --cpu_devices 4 --mesh dp=2,fsdp=2,tp=2

Without a coordinator it runs in one process (the reference). It trains a tiny model with deterministic weights for 3
steps (LoRA, or QLoRA with --train_type qlora) and process 0 writes the losses and the final adapter to --out (.npz);
with --export DIR, the Trainer then exports the PEFT adapter and the merged model into DIR (process 0 writes them), the
merged model also in shards of 64 KiB (DIR/sharded), and once where process 0 cannot write (under the file DIR/blocker):
every process prints `process I: export refused: ...`.
"""
import argparse, sys
import numpy as np
import jax

def run(mesh_spec:str, train_type:str='lora', export:str|None=None):
    import jax.numpy as jnp
    from felafax_lit.core import tiny_config, LoRAConfig
    from felafax_lit.model import Llama
    from felafax_lit.data import TokenDataset
    from felafax_lit.sharding import make_mesh
    from felafax_lit.train_jax import Trainer
    from felafax_lit.training import TrainConfig
    c, r = tiny_config(), np.random.default_rng(0)
    shapes = jax.eval_shape(Llama(c).init, jax.random.key(0), jnp.zeros((1, 4), jnp.int32))['params']
    params = jax.tree_util.tree_map_with_path(lambda p, s: ((1 if 'scale' in str(p) else 0) + 0.05 * r.standard_normal(s.shape)).astype(np.float32), shapes)
    ids = np.concatenate([r.integers(3, c.vocab_size, 17).astype(np.int32) for _ in range(48)])   # 48 rows of 17 tokens
    ds = TokenDataset(ids, np.ones(len(ids), np.int8), np.arange(0, len(ids) + 1, 17), np.arange(48), [str(i) for i in range(48)])
    tc = TrainConfig(train_type=train_type, batch_size=8, context_length=16, max_steps=3, lr=1e-3, seed=0, log_steps=100)
    tr = Trainer((c, params), tc, LoRAConfig(rank=4, targets=r'(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj|lm_head)$'), mesh=make_mesh(mesh_spec))
    losses = [row['loss'] for row in tr.fit(ds, progress=False)]
    if export:   # every process calls them; process 0 writes
        tr.save_adapter(f'{export}/adapter'); tr.save_merged(f'{export}/merged')
        tr.save_merged(f'{export}/sharded', max_shard_size=1 << 16)   # streamed shard by shard
        if jax.process_index() == 0: open(f'{export}/blocker', 'w').close()
        try: tr.save_merged(f'{export}/blocker/merged')   # process 0 cannot write there: every process must say so
        except Exception as e: print(f"process {jax.process_index()}: export refused: {type(e).__name__}: {e}", flush=True)
    from felafax_lit.train_jax import state_arrays
    return losses, {k: v for k, v in state_arrays({'trained': tr.trained}).items()}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--coordinator', help='HOST:PORT of process 0 (else JAX_COORDINATOR_ADDRESS, SLURM or MPI)')
    ap.add_argument('--num_processes', type=int); ap.add_argument('--process_id', type=int)
    ap.add_argument('--mesh', default='fsdp=-1', help="mesh spec over all devices of all processes")
    ap.add_argument('--train_type', default='lora', choices=['lora', 'qlora'])
    ap.add_argument('--cpu_devices', type=int, default=0, help='virtual CPU devices per process (gloo collectives)')
    ap.add_argument('--distributed', action='store_true', help='jax.distributed.initialize() from JAX_* variables, SLURM or Open MPI')
    ap.add_argument('--out', help='process 0 writes losses and adapter here (.npz)')
    ap.add_argument('--export', help="then the Trainer's exports: the PEFT adapter and the merged model, in this folder")
    a = ap.parse_args(argv)
    if a.cpu_devices:
        jax.config.update('jax_platforms', 'cpu'); jax.config.update('jax_num_cpu_devices', a.cpu_devices)
        jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    if a.coordinator or a.num_processes or a.distributed: jax.distributed.initialize(a.coordinator, a.num_processes, a.process_id)
    losses, adapter = run(a.mesh, a.train_type, a.export)
    print(f"process {jax.process_index()}/{jax.process_count()}: {jax.local_device_count()} local of {jax.device_count()} devices, "
          f"losses {np.round(losses, 6).tolist()}", flush=True)
    if a.out and jax.process_index() == 0: np.savez(a.out, losses=np.array(losses), **adapter)

if __name__ == '__main__': main()
