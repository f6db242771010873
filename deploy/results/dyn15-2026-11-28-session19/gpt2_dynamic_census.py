import sys
sys.path.insert(0, "tests/tools")
import torch, transformers
import dynamic_plan_census as c
from tccd import channel, config
cfg = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=128)
m = transformers.GPT2LMHeadModel(cfg).to(torch.bfloat16)
m.config.use_cache = False
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, ids): return s.m(input_ids=ids, use_cache=False).logits
ids = torch.randint(0, 1000, (4, 24))
gs = c.capture(W(m), ids)
stub = channel.connect(config.get())
for kind, graph, plan in c.compile_for_h100(stub, gs):
    native, counts = c.steps(plan)
    print(kind, len(native), sum(counts.values()))
    for k in native:
        if "aten::embedding.default" in list(k.ops) or "aten::arange.default" in list(k.ops): print("   ", k.kind, list(k.ops))
