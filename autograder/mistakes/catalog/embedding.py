"""Known mistakes of exercise 1, ``embedding.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes.catalog import Degenerate, Mutant

_LOOKUP = "return self.embedding(token_ids) * math.sqrt(self.d_model)"

MUTANTS = [
    Mutant(
        id="embedding_no_scale",
        exercise="embedding",
        hint_en="the looked-up vectors are not multiplied by sqrt(d_model) (Vaswani et al. 2017, section 3.4)",
        hint_ko="조회한 벡터에 sqrt(d_model) 을 곱하지 않았습니다 (Vaswani 외 2017, 3.4절)",
        replace=((_LOOKUP, "return self.embedding(token_ids)"),),
    ),
    Mutant(
        id="embedding_inverse_scale",
        exercise="embedding",
        hint_en="the vectors are divided by sqrt(d_model); they should be multiplied by it",
        hint_ko="벡터를 sqrt(d_model) 로 나누었습니다. 곱해야 합니다",
        replace=((_LOOKUP, "return self.embedding(token_ids) / math.sqrt(self.d_model)"),),
    ),
    Mutant(
        id="embedding_scale_d_model",
        exercise="embedding",
        hint_en="the vectors are multiplied by d_model instead of sqrt(d_model)",
        hint_ko="벡터에 sqrt(d_model) 대신 d_model 을 곱했습니다",
        replace=((_LOOKUP, "return self.embedding(token_ids) * self.d_model"),),
    ),
    Mutant(
        id="embedding_padding_idx_ignored",
        exercise="embedding",
        hint_en="padding_idx is not passed to nn.Embedding, so the padding row is neither zero nor frozen",
        hint_ko="padding_idx 를 nn.Embedding 에 넘기지 않아 패딩 행이 0 이 아니고 학습도 됩니다",
        replace=(("self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=padding_idx)",
                  "self.embedding = nn.Embedding(vocab_size, d_model)"),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("TokenEmbedding.forward",)

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("embedding_zeros", "embedding", "zeros of the right shape", """
def _forward(self, token_ids):
    return torch.zeros(*token_ids.shape, self.d_model)
TokenEmbedding.forward = _forward
"""),
)
