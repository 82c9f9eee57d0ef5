#!/usr/bin/env python
"""QLoRA training-step benchmark of an 8B-shaped Llama (random weights) on one GPU: bitsandbytes NF4 and HQQ 4-bit bases.

Builds `LlamaForCausalLM` with the Llama-3.1-8B shapes on the meta device, fills every decoder projection layer by layer
with a random bf16 weight quantized on the GPU (`quant_torch.quantize_linear`, so the full bf16 model never exists),
adds fp32 LoRA adapters (r=16, alpha=32) on the 7 projections (`fsdp.add_lora`, as `train_torch` does), turns on
activation checkpointing per decoder layer, and times AdamW training steps on random tokens (seq 2048, causal, no
packing mask: the SDPA causal fast path). No test depends on this script.

Prints per quantization: tokens/s, peak memory (`torch.cuda.max_memory_allocated`), and MFU, where

    MFU = tokens/s * (6 * N + 12 * L * d * T) / peak_flops

N = parameters of the dense model (embedding excluded, lm_head included), L layers, d = hidden size, T = sequence length
(the PaLM appendix-B convention: 6N for the matmuls of forward + backward, 12 L d T for attention scores and values),
peak_flops = the GPU's dense bf16 peak (989e12 for an H100/H200 SXM; pass --peak_tflops for others). The recomputation
of activation checkpointing and the dequantization are not counted as useful work; with a frozen base the weight-gradient
third of 6N is also not computed, so `MFU(4N)` (4N instead of 6N) is printed too.

Usage: python tools/gpu_torch_qlora_bench.py [--quants nf4,hqq] [--seq 2048] [--batch 1] [--steps 5] [--layers 32]
"""
import argparse, math, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch
from torch import nn
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from felafax_lit.core import preset, LoRAConfig
from felafax_lit.core import PROJECTION_NAMES
from felafax_lit.quant_torch import empty_model, quantize_linear
from felafax_lit.fsdp import add_lora, apply_activation_checkpointing


def build(quant, layers, dev, dtype=torch.bfloat16, seed=0):
    c = preset('llama3.1-8b').replace(num_hidden_layers=layers)
    model = empty_model(c.to_hf(), dtype)
    g = torch.Generator(dev).manual_seed(seed)
    rnd = lambda *s, std=0.02: torch.randn(*s, generator=g, device=dev, dtype=dtype) * std
    with torch.no_grad():
        for n, m in list(model.named_modules()):
            if isinstance(m, nn.Linear) and n.split('.')[-1] in PROJECTION_NAMES:
                parent, _, child = n.rpartition('.')
                setattr(model.get_submodule(parent), child, quantize_linear(rnd(m.out_features, m.in_features), quant, dtype, dev))
        for n, p in list(model.named_parameters()):
            if p.is_meta:
                mod, _, attr = n.rpartition('.')
                val = torch.ones(p.shape, device=dev, dtype=dtype) if 'norm' in n else rnd(*p.shape)
                model.get_submodule(mod)._parameters[attr] = nn.Parameter(val, requires_grad=False)
    with torch.device(dev): model.model.rotary_emb = LlamaRotaryEmbedding(config=model.config)
    torch.manual_seed(seed); add_lora(model, LoRAConfig(rank=16, alpha=32.0), dtype=torch.float32)
    apply_activation_checkpointing(model)
    return model.train(), c


def bench(quant, a):
    dev = torch.device('cuda')
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    t0 = time.time(); model, c = build(quant, a.layers, dev); load = time.time() - t0
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    x = torch.randint(0, c.vocab_size, (a.batch, a.seq), device=dev)
    times = []
    for i in range(a.warmup + a.steps):
        torch.cuda.synchronize(); t = time.time()
        loss = model(input_ids=x, labels=x).loss
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize(); times.append(time.time() - t)
    dt = sum(times[a.warmup:]) / a.steps; tps = a.batch * a.seq / dt
    D, L, T = c.hidden_size, c.num_hidden_layers, a.seq
    n_dense = L * (D * (2 * c.q_dim + 2 * c.kv_dim) + 3 * D * c.intermediate_size) + D * c.vocab_size   # + lm_head
    attn = 12 * L * D * T
    peak = a.peak_tflops * 1e12
    print(f"{quant:4s} layers {L} batch {a.batch} x seq {T}: build {load:.0f} s | step {dt:.3f} s | {tps:,.0f} tokens/s | "
          f"peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB | MFU {tps * (6 * n_dense + attn) / peak:.1%} | "
          f"MFU(4N) {tps * (4 * n_dense + attn) / peak:.1%} | loss {loss.item():.3f}", flush=True)
    del model, opt, params


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quants', default='nf4,hqq'); ap.add_argument('--seq', type=int, default=2048)
    ap.add_argument('--batch', type=int, default=1); ap.add_argument('--steps', type=int, default=5)
    ap.add_argument('--warmup', type=int, default=2); ap.add_argument('--layers', type=int, default=32)
    ap.add_argument('--peak_tflops', type=float, default=989.0)
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), 'torch', torch.__version__, flush=True)
    for q in a.quants.split(','): bench(q, a)
