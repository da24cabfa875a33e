"""Known mistakes of exercise 10 (bonus), ``rope.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_ANGLES_FREQ = ("inv_freq = torch.pow(float(base), -torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)\n"
                "    theta = torch.arange(max_len")
_APPLY_FREQ = ("inv_freq = torch.pow(float(base), -torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)\n"
               "    theta = pos[:, None]")
_PAIRS = "a, b = x[..., 0::2], x[..., 1::2]"
_ROTATE = ("rotated = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)\n"
           "    return rotated.flatten(-2)")

MUTANTS = [
    Mutant(
        id="rope_rotate_half",
        exercise="rope",
        convention=True,
        hint_en="you used the 'rotate half' layout (pairs x[i], x[i + head_dim/2], as in GPT-NeoX/LLaMA code), a "
                "real convention; this exercise uses RoFormer's interleaved pairs (x[2i], x[2i+1])",
        hint_ko="'rotate half' 배치(x[i] 와 x[i + head_dim/2] 를 쌍으로, GPT-NeoX/LLaMA 코드 방식)를 썼습니다. 실제로 "
                "쓰이는 방식이지만 이 과제는 RoFormer 의 교차 쌍 (x[2i], x[2i+1]) 을 씁니다",
        replace=((_PAIRS, "a, b = x[..., : head_dim // 2], x[..., head_dim // 2 :]"),
                 (_ROTATE, "return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)")),
    ),
    Mutant(
        id="rope_clockwise",
        exercise="rope",
        convention=True,
        hint_en="you rotated the interleaved pairs clockwise (multiplying by e^{-iθ}, a sense some ports use, "
                "equivalent to negated angles); this exercise rotates counter-clockwise: "
                "(a, b) -> (a cos θ - b sin θ, a sin θ + b cos θ)",
        hint_ko="교차 쌍을 시계 방향으로 회전했습니다 (e^{-iθ} 를 곱하는, 일부 구현의 방식으로 각도의 부호만 반대입니다). 이 "
                "과제는 반시계 방향으로 돌립니다: (a, b) -> (a cos θ - b sin θ, a sin θ + b cos θ)",
        replace=((_ROTATE, "rotated = torch.stack((a * cos + b * sin, -a * sin + b * cos), dim=-1)\n"
                           "    return rotated.flatten(-2)"),),
    ),
    Mutant(
        id="rope_exponent_i_over_d",
        exercise="rope",
        hint_en="the frequency exponent is i/head_dim instead of 2i/head_dim",
        hint_ko="주파수 지수를 2i/head_dim 이 아니라 i/head_dim 으로 썼습니다",
        replace=((_ANGLES_FREQ, _ANGLES_FREQ.replace("torch.arange(0, head_dim, 2,", "torch.arange(0, head_dim // 2,")),
                 (_APPLY_FREQ, _APPLY_FREQ.replace("torch.arange(0, head_dim, 2,", "torch.arange(0, head_dim // 2,"))),
    ),
    Mutant(
        id="rope_positions_ignored",
        exercise="rope",
        hint_en="the positions argument is ignored: rows must be rotated by the given positions, not by 0..S-1",
        hint_ko="positions 인자를 무시했습니다. 0..S-1 이 아니라 주어진 위치만큼 회전해야 합니다",
        replace=(('pos = positions.detach().to(device="cpu", dtype=torch.float64)',
                  "pos = torch.arange(seq_len, dtype=torch.float64)"),),
    ),
    Mutant(
        id="rope_angles_sin_cos_swapped",
        exercise="rope",
        hint_en="rope_angles returns (sin, cos); it must return (cos, sin)",
        hint_ko="rope_angles 가 (sin, cos) 를 반환합니다. (cos, sin) 순서여야 합니다",
        replace=(("return torch.cos(theta).to(torch.float32), torch.sin(theta).to(torch.float32)",
                  "return torch.sin(theta).to(torch.float32), torch.cos(theta).to(torch.float32)"),),
    ),
]

# Conventions found in public code; each entry names its source.
MUTANTS += [
    # Source: huggingface/transformers convert_llama_weights_to_hf.py permutes q/k weights because Meta's
    # LLaMA code rotates interleaved pairs while the HF port rotates halves; both senses occur in ports.
    Mutant(
        id="rope_rotate_half_clockwise",
        exercise="rope",
        convention=True,
        hint_en="you used the 'rotate half' layout (pairs x[i], x[i + head_dim/2]) and rotated clockwise, a "
                "real convention of some ports; this exercise uses RoFormer's interleaved pairs (x[2i], x[2i+1]) "
                "rotated counter-clockwise: (a cos θ - b sin θ, a sin θ + b cos θ)",
        hint_ko="'rotate half' 배치(x[i] 와 x[i + head_dim/2])로 시계 방향으로 회전했습니다 (일부 구현의 실제 방식). 이 "
                "과제는 RoFormer 의 교차 쌍 (x[2i], x[2i+1]) 을 반시계 방향으로 돌립니다: "
                "(a cos θ - b sin θ, a sin θ + b cos θ)",
        replace=((_PAIRS, "a, b = x[..., : head_dim // 2], x[..., head_dim // 2 :]"),
                 (_ROTATE, "return torch.cat((a * cos + b * sin, -a * sin + b * cos), dim=-1)")),
    ),
]


# Families (autograder.mistakes.families): RoPE on part of each head (conventions).
def _partial(variant) -> tuple:
    """RoPE on the first ``head_dim / divisor`` features of each head only (frequencies over that
    width), interleaved or rotate-half, the rest passed through (GPT-J's rotary_dim, GPT-NeoX's
    rotary_pct)."""
    divisor, halves = variant.params
    pairs = ("a, b = part[..., : rot // 2], part[..., rot // 2 :]" if halves
             else "a, b = part[..., 0::2], part[..., 1::2]")
    rotate = ("rotated = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)" if halves
              else "rotated = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)")
    return ((_APPLY_FREQ, f"rot = head_dim // {divisor}\n    "
                          + _APPLY_FREQ.replace("arange(0, head_dim, 2,", "arange(0, rot, 2,").replace("/ head_dim", "/ rot")),
            (_PAIRS, "part, rest = x[..., :rot], x[..., rot:]\n    " + pairs),
            (_ROTATE, rotate + "\n    return torch.cat((rotated, rest), dim=-1)"))


MUTANTS += catalog.generated("partial", families.ROPE_PARTIAL, _partial)


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("rope_angles", "apply_rope")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("rope_identity", "rope", "the identity: every angle 0, nothing rotated", """
def rope_angles(head_dim, max_len, base=10000.0):
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    return torch.ones(max_len, head_dim // 2), torch.zeros(max_len, head_dim // 2)
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    return x.clone()
"""),
    Degenerate("rope_apply_identity", "rope", "apply_rope returns x unrotated; rope_angles is right", """
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    return x.clone()
"""),
    Degenerate("rope_one_frequency", "rope", "every pair turned at one frequency (angle = position)", """
_reference_angles = rope_angles
def rope_angles(head_dim, max_len, base=10000.0):
    cos, sin = _reference_angles(head_dim, max_len, base)
    return cos[:, :1].expand_as(cos).clone(), sin[:, :1].expand_as(sin).clone()
def apply_rope(x, positions=None, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim must be even, got head_dim={x.shape[-1]}")
    pos = (torch.arange(x.shape[-2]) if positions is None else positions).double()[:, None]
    cos, sin = pos.cos().to(x.dtype), pos.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
"""),
    Degenerate("rope_positions_below_64", "rope", "right for positions below 64, position 63 beyond", """
_reference_angles, _reference_apply = rope_angles, apply_rope
def rope_angles(head_dim, max_len, base=10000.0):
    cos, sin = _reference_angles(head_dim, max_len, base)
    rows = torch.arange(max_len).clamp(max=63)
    return cos[rows], sin[rows]
def apply_rope(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return _reference_apply(x, pos.clamp(max=63), base)
"""),
)
