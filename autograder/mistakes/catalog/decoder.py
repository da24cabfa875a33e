"""Known mistakes in exercise 8 (decoder.py), as patches of ``solutions/decoder.py``."""

from autograder.mistakes.catalog import Degenerate, Mutant, _layernorm

_POST_SELF = "x = self.norm1(x + self.dropout1(attended))"
_POST_CROSS = "x = self.norm2(x + self.dropout2(attended))"
_POST_FF = "x = self.norm3(x + self.dropout3(self.feed_forward(x)))"
_PRE_SELF = "h, h, h, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask, need_weights=False"
_POST_SELF_CALL = "x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=tgt_mask, need_weights=False"
_PRE_CROSS = "h, memory, memory, key_padding_mask=memory_key_padding_mask, need_weights=False"
_POST_CROSS_CALL = "x, memory, memory, key_padding_mask=memory_key_padding_mask, need_weights=False"

MUTANTS = [
    Mutant(
        id="decoder_always_pre_ln",
        exercise="decoder",
        convention=True,
        hint_en="DecoderLayer always normalises before each sub-layer (Pre-LN, x = x + sublayer(norm(x)), a real "
                "convention used by GPT-2 and nn.Transformer(norm_first=True)); with norm_first=False the exercise "
                "asks for the paper's Post-LN: x = norm(x + sublayer(x)).",
        hint_ko="DecoderLayer 가 항상 부분층 앞에서 정규화합니다 (Pre-LN, x = x + "
                "sublayer(norm(x)): GPT-2 와 nn.Transformer(norm_first=True) 가"
                " 쓰는 실제 방식). norm_first=False 이면 이 과제는 논문의 Post-LN(x = norm(x"
                " + sublayer(x)))을 요구합니다.",
        replace=(("if self.norm_first:", "if True:"),),
    ),
    Mutant(
        id="decoder_always_post_ln",
        exercise="decoder",
        convention=True,
        hint_en="DecoderLayer always normalises after the residual addition (Post-LN, x = norm(x + sublayer(x)), the "
                "paper's convention); with norm_first=True the exercise asks for Pre-LN: x = x + sublayer(norm(x)).",
        hint_ko="DecoderLayer 가 항상 잔차를 더한 뒤 정규화합니다 (Post-LN, x = norm(x + "
                "sublayer(x)): 논문의 방식). norm_first=True 이면 이 과제는 Pre-LN(x = x"
                " + sublayer(norm(x)))을 요구합니다.",
        replace=(("if self.norm_first:", "if False:"),),
    ),
    Mutant(
        id="decoder_residual_after_norm",
        exercise="decoder",
        hint_en="The residual is added after the LayerNorm (x + norm(sublayer(x))); Post-LN normalises the "
                "sum: norm(x + sublayer(x)).",
        hint_ko="잔차를 LayerNorm 뒤에 더했습니다(x + norm(sublayer(x))). Post-LN 은 합을 정규화합니다: "
                "norm(x + sublayer(x)).",
        replace=((_POST_SELF, "x = x + self.norm1(self.dropout1(attended))"),
                 (_POST_CROSS, "x = x + self.norm2(self.dropout2(attended))"),
                 (_POST_FF, "x = x + self.norm3(self.dropout3(self.feed_forward(x)))")),
    ),
    Mutant(
        id="decoder_dropout_in_eval",
        exercise="decoder",
        hint_en="Dropout is applied in eval mode too (e.g. F.dropout(..., training=True)); use the nn.Dropout "
                "modules or pass training=self.training so eval() is deterministic.",
        hint_ko="eval 모드에서도 드롭아웃이 적용됩니다(예: F.dropout(..., training=True)). nn.Dropout 모듈을 "
                "쓰거나 training=self.training 을 넘겨 eval() 에서 결정적이게 하세요.",
        replace=((_POST_SELF,
                  "x = self.norm1(x + torch.nn.functional.dropout(attended, self.dropout1.p, training=True))"),),
    ),
    Mutant(
        id="decoder_cross_attn_kv_from_decoder",
        exercise="decoder",
        hint_en="Cross-attention takes its keys and values from the decoder; they must come from the encoder "
                "output memory (queries from the decoder): cross_attn(x, memory, memory).",
        hint_ko="크로스 어텐션의 key/value 를 디코더에서 가져왔습니다. query 는 디코더, key/value 는 인코더 "
                "출력 memory 에서 와야 합니다: cross_attn(x, memory, memory).",
        replace=((_PRE_CROSS, "h, h, h, need_weights=False"), (_POST_CROSS_CALL, "x, x, x, need_weights=False")),
    ),
    Mutant(
        id="decoder_self_attn_not_causal",
        exercise="decoder",
        hint_en="The decoder's self-attention ignores tgt_mask, so each position sees later target tokens.",
        hint_ko="디코더 셀프 어텐션이 tgt_mask 를 무시해서 각 위치가 뒤쪽 타깃 토큰을 봅니다.",
        replace=((_PRE_SELF, "h, h, h, key_padding_mask=tgt_key_padding_mask, need_weights=False"),
                 (_POST_SELF_CALL, "x, x, x, key_padding_mask=tgt_key_padding_mask, need_weights=False")),
    ),
    Mutant(
        id="decoder_always_causal",
        exercise="decoder",
        hint_en="DecoderLayer builds a causal mask itself when tgt_mask is None; apply only the masks the "
                "caller passes (as PyTorch does; the Transformer builds the causal mask).",
        hint_ko="tgt_mask 가 None 인데도 DecoderLayer 가 인과 마스크를 직접 만듭니다. 호출하는 쪽이 준 마스크만 "
                "적용하세요(PyTorch 와 같음. 인과 마스크는 Transformer 가 만듭니다).",
        replace=((_POST_SELF_CALL,
                  "x, x, x, key_padding_mask=tgt_key_padding_mask, need_weights=False, attn_mask=tgt_mask "
                  "if tgt_mask is not None else torch.ones(x.shape[1], x.shape[1], dtype=torch.bool, "
                  "device=x.device).triu(1)"),),
    ),
    Mutant(
        id="decoder_memory_padding_ignored",
        exercise="decoder",
        hint_en="memory_key_padding_mask is not passed to cross-attention, so the decoder attends to source "
                "padding.",
        hint_ko="memory_key_padding_mask 를 크로스 어텐션에 넘기지 않아 디코더가 소스의 패딩을 참조합니다.",
        replace=((_PRE_CROSS, "h, memory, memory, need_weights=False"),
                 (_POST_CROSS_CALL, "x, memory, memory, need_weights=False")),
    ),
    Mutant(
        id="decoder_pre_ln_missing_final_norm",
        exercise="decoder",
        hint_en="A Pre-LN Decoder (norm_first=True) needs one final LayerNorm (self.norm) after the last "
                "layer; it is missing.",
        hint_ko="Pre-LN Decoder(norm_first=True)는 마지막 층 뒤에 LayerNorm(self.norm)이 하나 더 필요한데 "
                "빠져 있습니다.",
        replace=(("self.norm = nn.LayerNorm(d_model) if norm_first else None", "self.norm = None"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
_LAYERS = ("self.layers = nn.ModuleList(\n"
           "            DecoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)\n"
           "            for _ in range(num_layers)\n"
           "        )")
_LOOP = "        for layer in self.layers:\n            x = layer(\n                x,\n"
_CAUSAL_CROSS = ", attn_mask=torch.ones(x.shape[1], memory.shape[1], dtype=torch.bool, device=x.device).triu(1)"

MUTANTS += [
    # Source: onlybooks/llm#4 (is_causal passed to the cross-attention), huggingface/transformers#48172
    # and NVIDIA/TransformerEngine#629 (cross-attention silently causal).
    Mutant(
        id="decoder_cross_attn_causal",
        exercise="decoder",
        hint_en="the cross-attention is causal too; only the self-attention takes the causal mask: every target "
                "position may attend to every (unpadded) source position",
        hint_ko="크로스 어텐션에도 인과 마스크를 적용했습니다. 인과 마스크는 셀프 어텐션에만 씁니다. 모든 타깃 위치는 "
                "(패딩이 아닌) 모든 소스 위치를 볼 수 있습니다",
        replace=((_PRE_CROSS, _PRE_CROSS.replace(", need_weights", _CAUSAL_CROSS + ", need_weights")),
                 (_POST_CROSS_CALL, _POST_CROSS_CALL.replace(", need_weights", _CAUSAL_CROSS + ", need_weights"))),
    ),
    # Source: espnet/espnet#1278 (one layer object applied N times) and harvardnlp/annotated-transformer#9.
    Mutant(
        id="decoder_shared_layer",
        exercise="decoder",
        hint_en="Decoder repeats one DecoderLayer object num_layers times ([layer] * num_layers), so all layers "
                "share their weights; build a new DecoderLayer for each position in the stack",
        hint_ko="Decoder 가 DecoderLayer 객체 하나를 num_layers 번 반복해([layer] * num_layers) 모든 층이 가중치를 "
                "공유합니다. 층마다 새 DecoderLayer 를 만드세요",
        replace=((_LAYERS, "self.layers = nn.ModuleList(\n"
                           "            [DecoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first)]"
                           " * num_layers\n        )"),),
    ),
    # Source: Atcold/NYU-DLSP20#270 and simon-ging/coot-videotext#5 (every layer applied to the input).
    Mutant(
        id="decoder_layers_fed_input",
        exercise="decoder",
        hint_en="every layer is applied to the Decoder's input, so only the last layer counts; feed each layer "
                "the previous layer's output",
        hint_ko="모든 층을 Decoder 의 입력에 적용해 마지막 층만 의미가 있습니다. 각 층에는 이전 층의 출력을 넣으세요",
        replace=((_LOOP, "        inputs = x\n        for layer in self.layers:\n            x = layer(\n"
                         "                inputs,\n"),),
    ),
    # Source: lsdefine/attention-is-all-you-need-keras#33 (one norm layer used after every sub-layer).
    Mutant(
        id="decoder_norm_shared",
        exercise="decoder",
        hint_en="the same LayerNorm (norm1) is used after every sub-layer; each sub-layer has its own "
                "(norm1, norm2, norm3)",
        hint_ko="모든 부분층 뒤에 같은 LayerNorm(norm1)을 썼습니다. 부분층마다 norm1, norm2, norm3 가 따로 있습니다",
        replace=((_POST_CROSS, "x = self.norm1(x + self.dropout2(attended))"),
                 (_POST_FF, "x = self.norm1(x + self.dropout3(self.feed_forward(x)))")),
    ),
    # Source: kyegomez/BitNet#32 (x = attn(x); x = x + x instead of a residual to the layer's input).
    Mutant(
        id="decoder_attention_residual_missing",
        exercise="decoder",
        hint_en="the self-attention residual adds the attention output to itself (x = attn(x); x = x + x), so the "
                "layer's input is lost: x = norm1(x + self_attn(x))",
        hint_ko="셀프 어텐션 잔차가 어텐션 출력을 자기 자신에 더해(x = attn(x); x = x + x) 층의 입력이 사라집니다: "
                "x = norm1(x + self_attn(x))",
        replace=((_POST_SELF, "x = self.norm1(self.dropout1(attended) + self.dropout1(attended))"),),
    ),
    # Source: LiyuanLucasLiu/Transformer-Clinic#27 (Pre-LN residual taken after the LayerNorm).
    Mutant(
        id="decoder_pre_ln_residual_normed",
        exercise="decoder",
        hint_en="in Pre-LN the residual is taken after the LayerNorm (x = norm(x); x = x + sublayer(x)); it must "
                "skip the norm: x = x + sublayer(norm(x))",
        hint_ko="Pre-LN 에서 잔차를 LayerNorm 뒤에서 가져왔습니다 (x = norm(x); x = x + sublayer(x)). 잔차는 정규화를 "
                "거치지 않아야 합니다: x = x + sublayer(norm(x))",
        replace=(("            h = self.norm1(x)\n", "            h = x = self.norm1(x)\n"),),
    ),
    # Source: strutive07/transformer-tensorflow2.0#14 (the feed-forward residual adds the layer's input
    # instead of the previous sub-layer's output).
    Mutant(
        id="decoder_ffn_residual_from_input",
        exercise="decoder",
        hint_en="the feed-forward residual adds the layer's input instead of the cross-attention sub-layer's "
                "output: each residual adds the x that enters that sub-layer",
        hint_ko="피드포워드 잔차에 크로스 어텐션 부분층의 출력이 아니라 층의 입력을 더했습니다. 각 잔차는 그 부분층에 "
                "들어가는 x 를 더해야 합니다",
        replace=((_POST_SELF_CALL + "\n            )[0]\n            x = self.norm1(",
                  _POST_SELF_CALL + "\n            )[0]\n            x_in = x\n            x = self.norm1("),
                 (_POST_FF, "x = self.norm3(x_in + self.dropout3(self.feed_forward(x)))")),
    ),
]

# Classes of mistakes: hand-written LayerNorms, sublayer placement, mask polarity.
MUTANTS += _layernorm.mutants("decoder", "class DecoderLayer(nn.Module):", (
    "self.norm1 = nn.LayerNorm(d_model)", "self.norm2 = nn.LayerNorm(d_model)", "self.norm3 = nn.LayerNorm(d_model)",
    "self.norm = nn.LayerNorm(d_model) if norm_first else None"))
MUTANTS += [
    Mutant(
        id="decoder_residual_missing",
        exercise="decoder",
        hint_en="the residual connection is missing: each sub-layer's output is normalised alone, "
                "norm(sublayer(x)); Add & Norm is norm(x + sublayer(x))",
        hint_ko="잔차 연결이 빠졌습니다. 부분층의 출력만 정규화했습니다(norm(sublayer(x))). Add & Norm 은 "
                "norm(x + sublayer(x)) 입니다",
        replace=((_POST_SELF, "x = self.norm1(self.dropout1(attended))"),
                 (_POST_CROSS, "x = self.norm2(self.dropout2(attended))"),
                 (_POST_FF, "x = self.norm3(self.dropout3(self.feed_forward(x)))")),
    ),
    Mutant(
        id="decoder_tgt_mask_inverted",
        exercise="decoder",
        hint_en="the decoder layer inverts tgt_mask before self-attention (~mask, True = may attend); in this kit "
                "True = blocked, and the mask is passed on as it is",
        hint_ko="디코더 층이 셀프 어텐션 전에 tgt_mask 를 뒤집었습니다(~mask, True = 볼 수 있음). 이 키트에서 "
                "True = 가려짐이며 마스크는 그대로 넘깁니다",
        replace=((_POST_SELF_CALL, "x, x, x, key_padding_mask=tgt_key_padding_mask, attn_mask=None if tgt_mask is "
                                   "None else ~tgt_mask, need_weights=False"),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("DecoderLayer.forward", "Decoder.forward")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("decoder_identity", "decoder", "layers that return their input", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return x.clone()
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_ignores_memory", "decoder", "no cross-attention: the source ignored", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return _reference_forward(self, x, torch.zeros_like(memory), tgt_mask, tgt_key_padding_mask, None)
_reference_forward = DecoderLayer.forward
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_ignores_context", "decoder", "no attention: memory and earlier tokens ignored", """
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    if self.norm_first:
        return x + self.dropout3(self.feed_forward(self.norm3(x)))
    return self.norm3(x + self.dropout3(self.feed_forward(x)))
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_cross_reads_itself", "decoder", "cross-attention reads the decoder's own states", """
_reference_forward = DecoderLayer.forward
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    return _reference_forward(self, x, x, tgt_mask, tgt_key_padding_mask, tgt_key_padding_mask)
DecoderLayer.forward = _forward
"""),
    Degenerate("decoder_cross_reads_mean_memory", "decoder", "cross-attention reads the mean of memory", """
_reference_forward = DecoderLayer.forward
def _forward(self, x, memory, tgt_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
    mean = memory.mean(dim=1, keepdim=True).expand_as(memory)
    return _reference_forward(self, x, mean, tgt_mask, tgt_key_padding_mask, None)
DecoderLayer.forward = _forward
"""),
)
