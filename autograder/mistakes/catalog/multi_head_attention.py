"""Known mistakes of exercise 5, ``multi_head_attention.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_SPLIT = "return x.reshape(batch, seq_len, num_heads, width // num_heads).transpose(1, 2)"
_MERGE = "return x.transpose(1, 2).reshape(batch, seq_len, num_heads * head_dim)"
_OUT = "output = self.out_proj(merge_heads(heads))"
_AVERAGE = "weights = weights.mean(dim=1)"
_QKV = """        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
"""
_PROJ = """        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
"""

MUTANTS = [
    Mutant(
        id="mha_split_without_transpose",
        exercise="multi_head_attention",
        hint_en="the heads are cut with view/reshape straight to [B, H, S, D/H] without a transpose, which mixes "
                "positions into heads: reshape to [B, S, H, D/H] and swap axes 1 and 2 (and back in merge_heads)",
        hint_ko="transpose 없이 view/reshape 로 바로 [B, H, S, D/H] 를 만들어 위치와 헤드가 섞였습니다. "
                "[B, S, H, D/H] 로 바꾼 뒤 1, 2 축을 바꾸세요 (merge_heads 에서는 반대로)",
        replace=((_SPLIT, "return x.reshape(batch, num_heads, seq_len, width // num_heads)"),
                 (_MERGE, "return x.reshape(batch, seq_len, num_heads * head_dim)")),
    ),
    Mutant(
        id="mha_split_only_without_transpose",
        exercise="multi_head_attention",
        hint_en="split_heads reshapes straight to [B, H, S, D/H] without a transpose (merge_heads is right), "
                "which mixes positions into heads: reshape to [B, S, H, D/H], then swap axes 1 and 2",
        hint_ko="split_heads 가 transpose 없이 바로 [B, H, S, D/H] 로 reshape 해 위치와 헤드가 섞였습니다 "
                "(merge_heads 는 맞습니다). [B, S, H, D/H] 로 바꾼 뒤 1, 2 축을 바꾸세요",
        replace=((_SPLIT, "return x.reshape(batch, num_heads, seq_len, width // num_heads)"),),
    ),
    Mutant(
        id="mha_merge_without_transpose",
        exercise="multi_head_attention",
        hint_en="merge_heads reshapes [B, H, S, d] to [B, S, H*d] without first swapping H and S back, which "
                "mixes positions",
        hint_ko="merge_heads 에서 H 와 S 축을 다시 바꾸지 않고 [B, S, H*d] 로 reshape 해 위치가 섞였습니다",
        replace=((_MERGE, "return x.reshape(batch, seq_len, num_heads * head_dim)"),),
    ),
    Mutant(
        id="mha_no_out_proj",
        exercise="multi_head_attention",
        hint_en="the output projection out_proj is not applied after merging the heads",
        hint_ko="헤드를 합친 뒤 출력 투영 out_proj 를 적용하지 않았습니다",
        replace=((_OUT, "output = merge_heads(heads)"),),
    ),
    Mutant(
        id="mha_heads_summed",
        exercise="multi_head_attention",
        hint_en="the returned weights are summed over the heads; average_attn_weights=True asks for their mean",
        hint_ko="반환한 가중치를 헤드에 대해 더했습니다. average_attn_weights=True 이면 평균이어야 합니다",
        replace=((_AVERAGE, "weights = weights.sum(dim=1)"),),
    ),
    Mutant(
        id="mha_weights_first_head_only",
        exercise="multi_head_attention",
        hint_en="the returned weights are those of one head; average_attn_weights=True asks for the mean over "
                "all heads",
        hint_ko="한 헤드의 가중치만 반환했습니다. average_attn_weights=True 이면 모든 헤드의 평균이어야 합니다",
        replace=((_AVERAGE, "weights = weights[:, 0]"),),
    ),
    Mutant(
        id="mha_average_flag_ignored",
        exercise="multi_head_attention",
        hint_en="average_attn_weights is ignored: with average_attn_weights=False return the per-head weights "
                "[B, H, S_q, S_k]",
        hint_ko="average_attn_weights 를 무시했습니다. False 이면 헤드별 가중치 [B, H, S_q, S_k] 를 반환해야 합니다",
        replace=(("if average_attn_weights:\n            weights = weights.mean(dim=1)",
                  "weights = weights.mean(dim=1)"),),
    ),
    Mutant(
        id="mha_scaled_by_sqrt_d_model",
        exercise="multi_head_attention",
        hint_en="the scores are scaled by sqrt(d_model); each head must use its own width: sqrt(head_dim)",
        hint_ko="점수를 sqrt(d_model) 로 나누었습니다. 각 헤드의 폭 sqrt(head_dim) 으로 나누어야 합니다",
        replace=(("q = split_heads(self.q_proj(query), self.num_heads)",
                  "q = split_heads(self.q_proj(query), self.num_heads) * (self.head_dim / self.d_model) ** 0.5"),),
    ),
    Mutant(
        id="mha_key_padding_ignored",
        exercise="multi_head_attention",
        hint_en="key_padding_mask is not applied: padded keys still get attention weight (not passed on, or a mask "
                "built and never applied: scores.masked_fill(...) returns a new tensor, assign it)",
        hint_ko="key_padding_mask 를 적용하지 않아 패딩된 key 도 가중치를 받습니다 (넘기지 않았거나, 만들기만 하고 적용하지 "
                "않은 마스크: scores.masked_fill(...) 은 새 텐서를 돌려주므로 대입하세요)",
        replace=(("            mask = combine_masks(attn_mask, key_padding_mask)",
                  "            mask = combine_masks(attn_mask, None)"),),
    ),
    Mutant(
        id="mha_attn_mask_ignored",
        exercise="multi_head_attention",
        hint_en="attn_mask is not applied (e.g. the causal mask): blocked positions still get attention weight (not "
                "passed on, or a mask built and never applied: scores.masked_fill(...) returns a new tensor, assign it)",
        hint_ko="attn_mask(예: 인과 마스크)를 적용하지 않아 가려진 위치도 가중치를 받습니다 (넘기지 않았거나, 만들기만 하고 "
                "적용하지 않은 마스크: scores.masked_fill(...) 은 새 텐서를 돌려주므로 대입하세요)",
        replace=(("            mask = combine_masks(attn_mask, key_padding_mask)",
                  "            mask = combine_masks(None, key_padding_mask)"),),
    ),
    Mutant(
        id="mha_dropout_in_eval",
        exercise="multi_head_attention",
        hint_en="attention dropout is applied in eval mode too: pass the dropout probability only while "
                "self.training (eval must be deterministic)",
        hint_ko="eval 모드에서도 어텐션 드롭아웃을 적용했습니다. self.training 일 때만 확률을 넘기세요 (eval 은 결정적이어야 합니다)",
        replace=(("dropout_p = self.dropout if self.training else 0.0", "dropout_p = self.dropout"),),
    ),
    Mutant(
        id="mha_fused_qkv",
        exercise="multi_head_attention",
        convention=True,
        hint_en="you used one fused in_proj layer for q, k and v (PyTorch's own layout, a real convention); this "
                "exercise asks for the named projections q_proj, k_proj, v_proj so weights can be loaded by name",
        hint_ko="q, k, v 에 하나로 합친 in_proj 층을 썼습니다 (PyTorch 의 실제 방식). 이 과제는 가중치를 이름으로 "
                "불러올 수 있도록 q_proj, k_proj, v_proj 를 따로 두어야 합니다",
        replace=((_PROJ, "        self.in_proj = nn.Linear(d_model, 3 * d_model, bias=bias)\n"),
                 (_QKV, "        w_q, w_k, w_v = self.in_proj.weight.chunk(3)\n"
                        "        b_q = b_k = b_v = None\n"
                        "        if self.in_proj.bias is not None:\n"
                        "            b_q, b_k, b_v = self.in_proj.bias.chunk(3)\n"
                        "        q = split_heads(nn.functional.linear(query, w_q, b_q), self.num_heads)\n"
                        "        k = split_heads(nn.functional.linear(key, w_k, b_k), self.num_heads)\n"
                        "        v = split_heads(nn.functional.linear(value, w_v, b_v), self.num_heads)\n")),
    ),
    # A common choice in real code: self-attention that also blocks the rows of padded queries. Only the
    # public convention test compares those rows; every other test compares the rows the contract fixes.
    Mutant(
        id="mha_padded_queries_masked",
        exercise="multi_head_attention",
        convention=True,
        hint_en="in self-attention you also blocked the rows of padded queries (their weights are zero, their output "
                "out_proj.bias): a common choice, but this exercise computes every query row as nn.MultiheadAttention"
                " does and lets the key padding mask alone remove padded positions (what a padded row holds is ignored downstream)",
        hint_ko="셀프 어텐션에서 패딩된 query 의 행도 가렸습니다 (가중치가 0, 출력이 out_proj.bias). 흔"
                "히 쓰는 선택이지만 이 과제는 nn.MultiheadAttention 처럼 모든 query 행을 계산하고, 패딩 위치는 key 패딩 마스크로만 제외합니다 (패딩된 행의 값은 뒤에서 쓰이지 않습니다)",
        replace=((_QKV, "        if key_padding_mask is not None and (query is key or (query.shape == key.shape\n"
                        "                                             and torch.equal(query, key))):\n"
                        "            rows = key_padding_mask[:, None, :, None]\n"
                        "            mask = rows if mask is None else mask | rows\n" + _QKV),),
    ),
]

# Mistakes reported in public code; each entry names its source.
MUTANTS += [
    # Source: Kyubyong/transformer#17 (the added output projection is a dense layer with
    # activation=tf.nn.relu; the paper's W_O is linear).
    Mutant(
        id="mha_relu_after_out_proj",
        exercise="multi_head_attention",
        hint_en="a ReLU follows the output projection; Concat(head_1, ..., head_h) W_O is linear, with no "
                "activation",
        hint_ko="출력 투영 뒤에 ReLU 를 적용했습니다. Concat(head_1, ..., head_h) W_O 는 활성화 없는 선형 변환입니다",
        replace=((_OUT, "output = torch.relu(self.out_proj(merge_heads(heads)))"),),
    ),
    # Source: CyberZHG/keras-multi-head#8, DeepGraphLearning/RecommenderSystems#21, hanxiao/tf-nlp-blocks#1
    # (q, k, v projections with a ReLU activation).
    Mutant(
        id="mha_relu_on_projections",
        exercise="multi_head_attention",
        hint_en="the q, k and v projections go through a ReLU; Q W_Q, K W_K, V W_V are linear projections",
        hint_ko="q, k, v 투영 뒤에 ReLU 를 적용했습니다. Q W_Q, K W_K, V W_V 는 선형 투영입니다",
        replace=((_QKV, "        q = split_heads(torch.relu(self.q_proj(query)), self.num_heads)\n"
                        "        k = split_heads(torch.relu(self.k_proj(key)), self.num_heads)\n"
                        "        v = split_heads(torch.relu(self.v_proj(value)), self.num_heads)\n"),),
    ),
    # Source: yflyzhang/AnnotatedTransformer#1 (value = self.k_proj(value): a copy-paste slip).
    Mutant(
        id="mha_value_uses_k_proj",
        exercise="multi_head_attention",
        hint_en="the values are projected with k_proj; they need their own projection v_proj",
        hint_ko="value 를 k_proj 로 투영했습니다. value 는 v_proj 로 투영해야 합니다",
        replace=(("v = split_heads(self.v_proj(value), self.num_heads)",
                  "v = split_heads(self.k_proj(value), self.num_heads)"),),
    ),
    # Source: OpenNMT/OpenNMT-py#1130 (review: keys and values were computed from the query,
    # linear_keys(query), which only coincides with the right answer in self-attention).
    Mutant(
        id="mha_keys_values_from_query",
        exercise="multi_head_attention",
        hint_en="the keys and values are projected from query instead of from the key and value arguments; in "
                "cross-attention they must come from the memory",
        hint_ko="key 와 value 를 key/value 인자가 아니라 query 에서 투영했습니다. 크로스 어텐션에서는 메모리에서 와야 합니다",
        replace=(("k = split_heads(self.k_proj(key), self.num_heads)",
                  "k = split_heads(self.k_proj(query), self.num_heads)"),
                 ("v = split_heads(self.v_proj(value), self.num_heads)",
                  "v = split_heads(self.v_proj(query), self.num_heads)")),
    ),
]

# Classes of mistakes: mask polarity and dtype inside the module, and the fully-masked-row
# convention inherited from attention (named "different convention", as there).
_SDPA = "heads, weights = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=dropout_p)"
_COMBINE = "            mask = combine_masks(attn_mask, key_padding_mask)"


def _inline_attention(scores_line: str) -> str:
    """The module's own attention instead of attention.scaled_dot_product_attention: ``scores_line``
    applies ``mask`` to ``scores``."""
    return ("scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5\n"
            "        if mask is not None:\n"
            f"            {scores_line}\n"
            "        weights = torch.nn.functional.dropout(torch.softmax(scores, dim=-1), dropout_p)\n"
            "        heads = weights @ v")


MUTANTS += [
    Mutant(
        id="mha_key_padding_inverted",
        exercise="multi_head_attention",
        hint_en="key_padding_mask is inverted inside the module (~mask, True = keep, the convention of "
                "F.scaled_dot_product_attention); in this kit True = padding, blocked",
        hint_ko="모듈 안에서 key_padding_mask 를 뒤집었습니다(~mask, True = 남김, F.scaled_dot_product_attention 의 "
                "규칙). 이 키트에서 True = 패딩(가려짐)입니다",
        replace=((_COMBINE, "            mask = combine_masks(attn_mask, None if key_padding_mask is None else "
                            "~key_padding_mask)"),),
    ),
    Mutant(
        id="mha_attn_mask_inverted",
        exercise="multi_head_attention",
        hint_en="attn_mask is inverted inside the module (~mask, True = may attend, the convention of "
                "F.scaled_dot_product_attention); in this kit True = blocked",
        hint_ko="모듈 안에서 attn_mask 를 뒤집었습니다(~mask, True = 볼 수 있음, F.scaled_dot_product_attention 의 "
                "규칙). 이 키트에서 True = 가려짐입니다",
        replace=((_COMBINE, "            mask = combine_masks(None if attn_mask is None else ~attn_mask, "
                            "key_padding_mask)"),),
    ),
    Mutant(
        id="mha_mask_added_as_float",
        exercise="multi_head_attention",
        hint_en="the bool mask is added to the scores as a 0/1 float (scores + mask.float()), which gives blocked "
                "keys a bonus of 1 instead of blocking them: fill them with masked_fill(mask, -inf) (or the dtype's "
                "minimum), or turn the mask into an additive one of 0 and -inf first",
        hint_ko="bool 마스크를 0/1 실수로 점수에 더했습니다(scores + mask.float()). 가려진 key 가 막히지 않고 1 을 "
                "더 받습니다. masked_fill(mask, -inf)(또는 dtype 의 최솟값)로 채우거나, 먼저 0 과 -inf 로 된 더하기 "
                "마스크로 바꾸세요",
        replace=((_SDPA, _inline_attention("scores = scores + mask.to(scores.dtype)")),),
    ),
    Mutant(
        id="mha_fully_masked_nan",
        exercise="multi_head_attention",
        convention=True,
        hint_en="a query whose keys are all blocked gives NaN (softmax over only -inf, what PyTorch's own "
                "nn.MultiheadAttention does, a real convention); this kit's rule is zero weights there, so "
                "that row's output is out_proj.bias",
        hint_ko="모든 key 가 가려진 query 에서 NaN 이 나옵니다 (-inf 만 있는 softmax, PyTorch 의 "
                "nn.MultiheadAttention 이 쓰는 실제 방식). 이 키트의 규칙은 그런 행의 가중치가 0 이고 출력이 "
                "out_proj.bias 인 것입니다",
        replace=((_SDPA, _inline_attention('scores = scores.masked_fill(mask, float("-inf"))')),),
    ),
    Mutant(
        id="mha_fully_masked_uniform",
        exercise="multi_head_attention",
        convention=True,
        hint_en="a query whose keys are all blocked averages all values (uniform weights from a finite fill such "
                "as -1e9, the Annotated Transformer's convention); this kit's rule is zero weights there, so "
                "that row's output is out_proj.bias",
        hint_ko="모든 key 가 가려진 query 가 모든 value 의 평균을 냅니다 (-1e9 같은 유한한 값으로 채운 균등 가중치, "
                "Annotated Transformer 의 방식). 이 키트의 규칙은 그런 행의 가중치가 0 이고 출력이 out_proj.bias 인 "
                "것입니다",
        replace=((_SDPA, _inline_attention("scores = scores.masked_fill(mask, -1e9)")),),
    ),
]



# Families (autograder.mistakes.families): the module's own attention with another scale or another way
# of applying the masks, the projections' layout and bias, the returned weights before dropout, and a
# causal mask of its own (GPT-style code).
_IMPORT = "from masks import combine_masks"
_DROPOUT = "torch.nn.functional.dropout(weights, dropout_p)"


def _own_attention(scale: str = " / self.head_dim ** 0.5", *, weights_before_dropout: bool = False) -> tuple:
    """The patches of a module that computes its heads' attention itself: the scores ``q k^T`` then
    ``scale``, masked the kit's way (masks.masked_softmax), dropout on the weights; the weights it
    returns are the dropped ones unless ``weights_before_dropout``."""
    if weights_before_dropout:
        tail = f"heads = {_DROPOUT} @ v"
    else:
        tail = f"weights = {_DROPOUT}\n        heads = weights @ v"
    return ((_IMPORT, _IMPORT + ", masked_softmax"),
            (_SDPA, f"scores = q @ k.transpose(-2, -1){scale}\n"
                    f"        weights = masked_softmax(scores, mask, dim=-1)\n"
                    f"        {tail}"))


_LINEAR_T = "nn.functional.linear({x}, self.{name}.weight.t(), self.{name}.bias)"

MUTANTS += catalog.generated("scale", families.MHA_SCALE, lambda v: _own_attention(v.code))
# on a test that passes one mask, masks never applied give what mha_key_padding_ignored or mha_attn_mask_ignored
# give (named first: a test with both masks tells them apart, and only there is a forgotten mask distinct)
MUTANTS += catalog.generated("mask", families.MHA_MASK, lambda v: ((_SDPA, _inline_attention(v.code)),))
MUTANTS += catalog.generated("layout", [families.VARIANTS["mha_weights_transposed"]], lambda v: (
    (_QKV, "".join(f"        {n} = split_heads({_LINEAR_T.format(x=arg, name=name)}, self.num_heads)\n"
                   for n, arg, name in (("q", "query", "q_proj"), ("k", "key", "k_proj"), ("v", "value", "v_proj")))),
    (_OUT, "output = " + _LINEAR_T.format(x="merge_heads(heads)", name="out_proj"))))
MUTANTS += catalog.generated("bias", [families.VARIANTS["mha_projections_without_bias"]], lambda v: (
    (_PROJ, _PROJ.replace("bias=bias", "bias=False")),))
# Source: GPT-style code (nanoGPT) calls F.scaled_dot_product_attention; given the kit's mask (True = blocked)
# unchanged, SDPA (True = attend) applies it inverted. Every test that reaches it also fails as forbidden.
MUTANTS += catalog.generated("forbidden", families.FORBIDDEN_MASK, lambda v: (
    (_IMPORT, _IMPORT + ", masked_softmax"),
    (_SDPA, "heads = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)\n"
            "        weights = masked_softmax(q @ k.transpose(-2, -1) / self.head_dim ** 0.5, mask, dim=-1)")))
MUTANTS += [
    Mutant(
        id="mha_weights_before_dropout",
        exercise="multi_head_attention",
        hint_en="the returned attention weights are the ones before dropout (the output used the dropped ones); "
                "return the weights after dropout, as nn.MultiheadAttention does",
        hint_ko="반환한 어텐션 가중치가 드롭아웃 전의 것입니다 (출력은 드롭아웃된 가중치로 계산했습니다). "
                "nn.MultiheadAttention 처럼 드롭아웃 뒤의 가중치를 반환하세요",
        replace=_own_attention(weights_before_dropout=True),
    ),
    # Source: GPT-style attention (nanoGPT's CausalSelfAttention, the LLMs-from-scratch course) builds a
    # causal mask of its own and applies it in every call.
    Mutant(
        id="mha_always_causal",
        exercise="multi_head_attention",
        hint_en="the module applies a causal mask of its own in every call (GPT-style self-attention); this "
                "module applies only the masks the caller passes (attn_mask, key_padding_mask)",
        hint_ko="모듈이 호출마다 자체 인과 마스크를 적용합니다 (GPT 방식 셀프 어텐션). 이 모듈은 호출한 쪽이 넘긴 "
                "마스크(attn_mask, key_padding_mask)만 적용합니다",
        replace=((_QKV, "        causal = torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).triu(1)\n"
                        "        mask = causal if mask is None else mask | causal\n" + _QKV),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("split_heads", "merge_heads", "MultiHeadAttention.forward")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("mha_uniform", "multi_head_attention", "uniform weights over every key, per head", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    weights = torch.full((*query.shape[:-1], key.shape[-2]), 1.0 / key.shape[-2], dtype=query.dtype)
    return torch.matmul(weights, value), weights
"""),
    Degenerate("mha_ignores_keys", "multi_head_attention", "each query attends to itself only (keys ignored)", """
def scaled_dot_product_attention(query, key, value, mask=None, dropout_p=0.0):
    s_q, s_k = query.shape[-2], key.shape[-2]
    weights = torch.zeros(*query.shape[:-1], s_k, dtype=query.dtype)
    idx = torch.arange(s_q) % s_k
    weights[..., torch.arange(s_q), idx] = 1.0
    return torch.matmul(weights, value), weights
"""),
    Degenerate("mha_mean_key_query", "multi_head_attention", "the mean key as every query", """
_reference_forward = MultiHeadAttention.forward
def _forward(self, query, key, value, *args, **kwargs):
    return _reference_forward(self, key.mean(dim=1, keepdim=True).expand(query.shape), key, value, *args, **kwargs)
MultiHeadAttention.forward = _forward
"""),
)
