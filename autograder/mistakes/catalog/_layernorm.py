"""Hand-written LayerNorm mistakes shared by every exercise that uses a LayerNorm (encoder, decoder):
each mutant swaps ``nn.LayerNorm(d_model)`` for a class of the student's own that keeps the contract's
attribute names (``weight``, ``bias``), so its weights load and only its maths differs.

``eps`` outside the square root (``(x - mean) / (std + eps)``, the Annotated Transformer's form) is
not a mutant: with ``eps = 1e-5`` it changes an output by about ``eps / (2 var)`` relatively, under
the tests' tolerances for every input whose variance is not tiny; with the unbiased standard deviation
(as there) it is named as ``<exercise>_layernorm_unbiased``.
"""

from autograder.mistakes.catalog import Mutant

_CLASS = '''class LayerNorm(nn.Module):
    def __init__(self, features, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
{body}

'''

_BODIES = {
    "unbiased": "        var = x.var(-1, keepdim=True)\n"
                "        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias",
    "no_affine": "        var = x.var(-1, unbiased=False, keepdim=True)\n"
                 "        return (x - mean) / torch.sqrt(var + self.eps)",
}

_HINTS = {
    "unbiased": (
        "your LayerNorm divides by the unbiased standard deviation (x.std() or x.var() with their default "
        "unbiased=True, as in the Annotated Transformer); LayerNorm uses the biased one, "
        "x.var(-1, unbiased=False), as nn.LayerNorm does",
        "직접 만든 LayerNorm 이 불편 표준편차(기본값 unbiased=True 인 x.std() 나 x.var(), Annotated Transformer 의 "
        "방식)로 나눕니다. LayerNorm 은 nn.LayerNorm 처럼 편향 분산 x.var(-1, unbiased=False) 를 씁니다"),
    "no_affine": (
        "your LayerNorm normalises but never applies its weight and bias (the learned gain and shift): "
        "return weight * (x - mean) / sqrt(var + eps) + bias",
        "직접 만든 LayerNorm 이 정규화만 하고 weight 와 bias(학습되는 배율과 이동)를 적용하지 않습니다: "
        "weight * (x - mean) / sqrt(var + eps) + bias 를 반환하세요"),
}


def mutants(exercise: str, first_class: str, norms: tuple[str, ...]) -> list[Mutant]:
    """One mutant per variant of :data:`_BODIES` for ``exercise``: the class inserted before
    ``first_class`` (its definition line) and each line of ``norms`` with ``nn.LayerNorm`` replaced."""
    out = []
    for variant, body in _BODIES.items():
        en, ko = _HINTS[variant]
        replace = ((first_class, _CLASS.format(body=body) + first_class),)
        replace += tuple((line, line.replace("nn.LayerNorm(", "LayerNorm(")) for line in norms)
        out.append(Mutant(id=f"{exercise}_layernorm_{variant}", exercise=exercise, hint_en=en, hint_ko=ko,
                          replace=replace))
    return out
