"""Every module of the evaluation set (``evasion.modules()``) is correct: its outputs equal the
reference's on random inputs and it raises ValueError where the contract asks. Run by
``benchmarks/compare_structural.py --check`` (importing this runs it; raises when one is wrong)."""

import importlib
import sys
import types
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "solutions"))
import evasion  # noqa: E402
ref = {n: importlib.import_module(n) for n in ("positional_encoding", "attention", "multi_head_attention", "encoder")}
def load(name, code):
    m = types.ModuleType(name); exec(compile(code, name, "exec"), m.__dict__); return m
torch.manual_seed(0)
bad = 0
for ex, mods in evasion.modules().items():
    for key, code in mods.items():
        m = load(ex, code)
        try:
            if ex == "positional_encoding":
                ok = torch.allclose(m.sinusoidal_table(7, 6), ref[ex].sinusoidal_table(7, 6), atol=1e-5)
                a = m.PositionalEncoding(6, 7, 0.0); b = ref[ex].PositionalEncoding(6, 7, 0.0); x = torch.randn(2, 5, 6)
                ok &= torch.allclose(a(x), b(x), atol=1e-5)
                for bad_args in [(5, 7), (0, 7)]:
                    try: m.sinusoidal_table(bad_args[1], bad_args[0]); ok = False
                    except ValueError: pass
            elif ex == "attention":
                q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
                mask = torch.rand(2, 3, 5) < 0.4; mask[0, 0] = True
                o1, w1 = m.scaled_dot_product_attention(q, k, v, mask); o2, w2 = ref[ex].scaled_dot_product_attention(q, k, v, mask)
                ok = torch.allclose(o1, o2, atol=1e-5) and torch.allclose(w1, w2, atol=1e-5)
                try: m.scaled_dot_product_attention(q, torch.randn(2, 5, 3), v); ok = False
                except ValueError: pass
            elif ex == "encoder":
                ok = True
                for nf in (False, True):
                    torch.manual_seed(2); a = m.Encoder(2, 8, 2, 16, 0.0, norm_first=nf)
                    torch.manual_seed(2); b = ref[ex].Encoder(2, 8, 2, 16, 0.0, norm_first=nf)
                    a.load_state_dict(b.state_dict()); a.eval(); b.eval()
                    x = torch.randn(2, 5, 8); kpm = torch.zeros(2, 5, dtype=torch.bool); kpm[0, 3:] = True
                    ok &= torch.allclose(a(x, kpm), b(x, kpm), atol=1e-5) and torch.allclose(a(x), b(x), atol=1e-5)
                try: m.Encoder(-1, 8, 2, 16); ok = False
                except ValueError: pass
            else:
                torch.manual_seed(1); a = m.MultiHeadAttention(8, 2); torch.manual_seed(1); b = ref[ex].MultiHeadAttention(8, 2)
                a.load_state_dict(b.state_dict())
                q, k = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
                kpm = torch.zeros(2, 5, dtype=torch.bool); kpm[1, 3:] = True
                am = torch.triu(torch.ones(3, 5, dtype=torch.bool), 1)
                ok = True
                for kw in ({}, {"key_padding_mask": kpm}, {"attn_mask": am, "key_padding_mask": kpm}, {"average_attn_weights": False}):
                    o1, w1 = a(q, k, k, **kw); o2, w2 = b(q, k, k, **kw)
                    ok &= torch.allclose(o1, o2, atol=1e-5) and torch.allclose(w1, w2, atol=1e-5)
                ok &= a(q, k, k, need_weights=False)[1] is None
                ok &= torch.allclose(m.merge_heads(m.split_heads(q, 2)), q) and torch.allclose(m.split_heads(q, 2), ref[ex].split_heads(q, 2))
        except Exception as e:
            ok = f"{type(e).__name__}: {e}"
        if ok is not True: bad += 1
        print(ex, key, ok)
print("bad", bad)
assert bad == 0, f"{bad} module(s) of the evaluation set are not correct"
