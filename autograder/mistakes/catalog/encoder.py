"""Known mistakes in exercise 7 (encoder.py), as patches of ``solutions/encoder.py``."""

from autograder.mistakes.catalog import Degenerate, Mutant, _layernorm

_POST_ATTN = "x = self.norm1(x + self.dropout1(attended))"
_POST_FF = "x = self.norm2(x + self.dropout2(self.feed_forward(x)))"

MUTANTS = [
    Mutant(
        id="encoder_always_pre_ln",
        exercise="encoder",
        convention=True,
        hint_en="EncoderLayer always normalises before each sub-layer (Pre-LN, x = x + sublayer(norm(x)), a real "
                "convention used by GPT-2 and nn.Transformer(norm_first=True)); with norm_first=False the exercise "
                "asks for the paper's Post-LN: x = norm(x + sublayer(x)).",
        hint_ko="EncoderLayer 가 항상 부분층 앞에서 정규화합니다 (Pre-LN, x = x + "
                "sublayer(norm(x)): GPT-2 와 nn.Transformer(norm_first=True) 가"
                " 쓰는 실제 방식). norm_first=False 이면 이 과제는 논문의 Post-LN(x = norm(x"
                " + sublayer(x)))을 요구합니다.",
        replace=(("if self.norm_first:", "if True:"),),
    ),
    Mutant(
        id="encoder_always_post_ln",
        exercise="encoder",
        convention=True,
        hint_en="EncoderLayer always normalises after the residual addition (Post-LN, x = norm(x + sublayer(x)), the "
                "paper's convention); with norm_first=True the exercise asks for Pre-LN: x = x + sublayer(norm(x)).",
        hint_ko="EncoderLayer 가 항상 잔차를 더한 뒤 정규화합니다 (Post-LN, x = norm(x + "
                "sublayer(x)): 논문의 방식). norm_first=True 이면 이 과제는 Pre-LN(x = x"
                " + sublayer(norm(x)))을 요구합니다.",
        replace=(("if self.norm_first:", "if False:"),),
    ),
    Mutant(
        id="encoder_residual_after_norm",
        exercise="encoder",
        hint_en="The residual is added after the LayerNorm (x + norm(sublayer(x))); Post-LN normalises the "
                "sum: norm(x + sublayer(x)).",
        hint_ko="잔차를 LayerNorm 뒤에 더했습니다(x + norm(sublayer(x))). Post-LN 은 합을 정규화합니다: "
                "norm(x + sublayer(x)).",
        replace=((_POST_ATTN, "x = x + self.norm1(self.dropout1(attended))"),
                 (_POST_FF, "x = x + self.norm2(self.dropout2(self.feed_forward(x)))")),
    ),
    Mutant(
        id="encoder_dropout_in_eval",
        exercise="encoder",
        hint_en="Dropout is applied in eval mode too (e.g. F.dropout(..., training=True)); use the nn.Dropout "
                "modules or pass training=self.training so eval() is deterministic.",
        hint_ko="eval 모드에서도 드롭아웃이 적용됩니다(예: F.dropout(..., training=True)). nn.Dropout 모듈을 "
                "쓰거나 training=self.training 을 넘겨 eval() 에서 결정적이게 하세요.",
        replace=((_POST_ATTN,
                  "x = self.norm1(x + torch.nn.functional.dropout(attended, self.dropout1.p, training=True))"),),
    ),
    Mutant(
        id="encoder_pre_ln_missing_final_norm",
        exercise="encoder",
        hint_en="A Pre-LN Encoder (norm_first=True) needs one final LayerNorm (self.norm) after the last "
                "layer; it is missing.",
        hint_ko="Pre-LN Encoder(norm_first=True)는 마지막 층 뒤에 LayerNorm(self.norm)이 하나 더 필요한데 "
                "빠져 있습니다.",
        replace=(("self.norm = nn.LayerNorm(d_model) if norm_first else None", "self.norm = None"),),
    ),
    Mutant(
        id="encoder_padding_mask_ignored",
        exercise="encoder",
        hint_en="The key_padding_mask is not passed to self-attention, so valid positions attend to padding.",
        hint_ko="key_padding_mask 를 셀프 어텐션에 넘기지 않아 유효한 위치가 패딩을 참조합니다.",
        replace=(("attended = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]",
                  "attended = self.self_attn(x, x, x, need_weights=False)[0]"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
_LAYERS = ("self.layers = nn.ModuleList(\n"
           "            EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)\n"
           "            for _ in range(num_layers)\n"
           "        )")
_LOOP = "        for layer in self.layers:\n            x = layer(x, key_padding_mask=key_padding_mask)\n"
_PRE_ATTN = "            h = self.norm1(x)\n            x = x + self.dropout1("

MUTANTS += [
    # Source: espnet/espnet#1278 (one layer object applied 12 times instead of 12 layers) and
    # harvardnlp/annotated-transformer#9 (why clones() deep-copies).
    Mutant(
        id="encoder_shared_layer",
        exercise="encoder",
        hint_en="Encoder repeats one EncoderLayer object num_layers times ([layer] * num_layers), so all layers "
                "share their weights; build a new EncoderLayer for each position in the stack",
        hint_ko="Encoder 가 EncoderLayer 객체 하나를 num_layers 번 반복해([layer] * num_layers) 모든 층이 가중치를 "
                "공유합니다. 층마다 새 EncoderLayer 를 만드세요",
        replace=((_LAYERS, "self.layers = nn.ModuleList(\n"
                           "            [EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)]"
                           " * num_layers\n        )"),),
    ),
    # Source: Atcold/NYU-DLSP20#270 and simon-ging/coot-videotext#5 (every layer is applied to the
    # embeddings, so only the last layer counts).
    Mutant(
        id="encoder_layers_fed_input",
        exercise="encoder",
        hint_en="every layer is applied to the Encoder's input, so only the last layer counts; feed each layer "
                "the previous layer's output",
        hint_ko="모든 층을 Encoder 의 입력에 적용해 마지막 층만 의미가 있습니다. 각 층에는 이전 층의 출력을 넣으세요",
        replace=((_LOOP, "        inputs = x\n        for layer in self.layers:\n"
                         "            x = layer(inputs, key_padding_mask=key_padding_mask)\n"),),
    ),
    # Source: strutive07/transformer-tensorflow2.0#14 and JanSchm/CapMarket#8 (the feed-forward
    # residual adds the layer's input instead of the attention sub-layer's output).
    Mutant(
        id="encoder_ffn_residual_from_input",
        exercise="encoder",
        hint_en="the feed-forward residual adds the layer's input instead of the attention sub-layer's output: "
                "x = norm1(x + attn(x)), then x = norm2(x + ff(x)) with that new x",
        hint_ko="피드포워드 잔차에 어텐션 부분층의 출력이 아니라 층의 입력을 더했습니다. x = norm1(x + attn(x)) 다음 그 "
                "새 x 로 x = norm2(x + ff(x)) 입니다",
        replace=((_POST_ATTN, "h = self.norm1(x + self.dropout1(attended))"),
                 (_POST_FF, "x = self.norm2(x + self.dropout2(self.feed_forward(h)))")),
    ),
    # Source: kyegomez/BitNet#32 (x = attn(x); x = x + x: the residual adds the sub-layer's output to
    # itself instead of to the layer's input).
    Mutant(
        id="encoder_attention_residual_missing",
        exercise="encoder",
        hint_en="the attention residual adds the attention output to itself (x = attn(x); x = x + x), so the "
                "layer's input is lost: x = norm1(x + attn(x))",
        hint_ko="어텐션 잔차가 어텐션 출력을 자기 자신에 더해(x = attn(x); x = x + x) 층의 입력이 사라집니다: "
                "x = norm1(x + attn(x))",
        replace=((_POST_ATTN, "x = self.norm1(self.dropout1(attended) + self.dropout1(attended))"),),
    ),
    # Source: lsdefine/attention-is-all-you-need-keras#33 (one norm_layer object used after both
    # sub-layers).
    Mutant(
        id="encoder_norm_shared",
        exercise="encoder",
        hint_en="the same LayerNorm (norm1) is used after both sub-layers; the feed-forward sub-layer has its "
                "own norm2",
        hint_ko="두 부분층 뒤에 같은 LayerNorm(norm1)을 썼습니다. 피드포워드 부분층에는 norm2 가 따로 있습니다",
        replace=((_POST_FF, "x = self.norm1(x + self.dropout2(self.feed_forward(x)))"),),
    ),
    # Source: LiyuanLucasLiu/Transformer-Clinic#27 (in Pre-LN the residual must be taken before the
    # LayerNorm; taking it after normalises the residual stream).
    Mutant(
        id="encoder_pre_ln_residual_normed",
        exercise="encoder",
        hint_en="in Pre-LN the residual is taken after the LayerNorm (x = norm(x); x = x + sublayer(x)); it must "
                "skip the norm: x = x + sublayer(norm(x))",
        hint_ko="Pre-LN 에서 잔차를 LayerNorm 뒤에서 가져왔습니다 (x = norm(x); x = x + sublayer(x)). 잔차는 정규화를 "
                "거치지 않아야 합니다: x = x + sublayer(norm(x))",
        replace=((_PRE_ATTN, "            h = x = self.norm1(x)\n            x = x + self.dropout1("),),
    ),
]

# Classes of mistakes: hand-written LayerNorms, sublayer placement, mask polarity.
MUTANTS += _layernorm.mutants("encoder", "class EncoderLayer(nn.Module):", (
    "self.norm1 = nn.LayerNorm(d_model)", "self.norm2 = nn.LayerNorm(d_model)",
    "self.norm = nn.LayerNorm(d_model) if norm_first else None"))
MUTANTS += [
    # Source: a common first attempt (Add & Norm without the Add): x = norm(sublayer(x)).
    Mutant(
        id="encoder_residual_missing",
        exercise="encoder",
        hint_en="the residual connection is missing: each sub-layer's output is normalised alone, "
                "norm(sublayer(x)); Add & Norm is norm(x + sublayer(x))",
        hint_ko="잔차 연결이 빠졌습니다. 부분층의 출력만 정규화했습니다(norm(sublayer(x))). Add & Norm 은 "
                "norm(x + sublayer(x)) 입니다",
        replace=((_POST_ATTN, "x = self.norm1(self.dropout1(attended))"),
                 (_POST_FF, "x = self.norm2(self.dropout2(self.feed_forward(x)))")),
    ),
    # Source: a SublayerConnection that already returns x + sublayer(x), wrapped in another x + ...
    # (the residual added twice).
    Mutant(
        id="encoder_residual_doubled",
        exercise="encoder",
        hint_en="the residual is added twice (a sub-layer helper that already returns x + sublayer(x), added "
                "to x again): Add & Norm is norm(x + sublayer(x))",
        hint_ko="잔차를 두 번 더했습니다 (이미 x + sublayer(x) 를 돌려주는 도우미에 x 를 또 더함). Add & Norm 은 "
                "norm(x + sublayer(x)) 입니다",
        replace=((_POST_ATTN, "x = self.norm1(x + x + self.dropout1(attended))"),
                 (_POST_FF, "x = self.norm2(x + x + self.dropout2(self.feed_forward(x)))")),
    ),
    Mutant(
        id="encoder_padding_mask_inverted",
        exercise="encoder",
        hint_en="the encoder layer inverts key_padding_mask before self-attention (~mask, True = keep); in this "
                "kit True = padding, blocked, and the mask is passed on as it is",
        hint_ko="인코더 층이 셀프 어텐션 전에 key_padding_mask 를 뒤집었습니다(~mask, True = 남김). 이 키트에서 "
                "True = 패딩(가려짐)이며 마스크는 그대로 넘깁니다",
        replace=(("attended = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]",
                  "attended = self.self_attn(x, x, x, key_padding_mask=None if key_padding_mask is None else "
                  "~key_padding_mask, need_weights=False)[0]"),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("EncoderLayer.forward", "Encoder.forward")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("encoder_identity", "encoder", "layers that return their input", """
def _forward(self, x, key_padding_mask=None):
    return x.clone()
EncoderLayer.forward = _forward
"""),
    Degenerate("encoder_feed_forward_only", "encoder", "no self-attention: each position alone (the context ignored)", """
def _forward(self, x, key_padding_mask=None):
    if self.norm_first:
        return x + self.dropout2(self.feed_forward(self.norm2(x)))
    return self.norm2(x + self.dropout2(self.feed_forward(x)))
EncoderLayer.forward = _forward
"""),
    Degenerate("encoder_two_layernorms", "encoder", "a layer that is only its two LayerNorms", """
def _forward(self, x, key_padding_mask=None):
    return self.norm2(self.norm1(x))
EncoderLayer.forward = _forward
"""),
    Degenerate("encoder_self_only", "encoder", "each position attends to itself only", """
def _forward(self, x, key_padding_mask=None):
    own = lambda h: self.self_attn.out_proj(self.self_attn.v_proj(h))
    if self.norm_first:
        x = x + self.dropout1(own(self.norm1(x)))
        return x + self.dropout2(self.feed_forward(self.norm2(x)))
    x = self.norm1(x + self.dropout1(own(x)))
    return self.norm2(x + self.dropout2(self.feed_forward(x)))
EncoderLayer.forward = _forward
"""),
)
