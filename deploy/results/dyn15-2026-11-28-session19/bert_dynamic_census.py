import sys
sys.path.insert(0, "tests/tools")
import torch, transformers
import dynamic_plan_census as c
from tccd import channel, config
cfg = transformers.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128, vocab_size=1000, max_position_embeddings=128, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
m = transformers.BertModel(cfg).to(torch.bfloat16)
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, ids): return s.m(input_ids=ids).last_hidden_state
ids = torch.randint(0, 1000, (4, 24))
gs = c.capture(W(m), ids)
stub = channel.connect(config.get())
for kind, graph, plan in c.compile_for_h100(stub, gs):
    native, counts = c.steps(plan)
    print(kind, len(native), sum(counts.values()))
    for k in native:
        if "aten::embedding.default" in list(k.ops) or "aten::arange.default" in list(k.ops): print("   ", k.kind, list(k.ops))
