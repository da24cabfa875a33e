"""Known mistakes in exercise 8 (decoder.py), as patches of ``solutions/decoder.py``."""

from autograder.catalog import Mutant

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
        hint_en="DecoderLayer normalises before each sub-layer (Pre-LN) even when norm_first=False asks "
                "for the paper's Post-LN: x = norm(x + sublayer(x)).",
        hint_ko="norm_first=False 이면 논문의 Post-LN(x = norm(x + sublayer(x)))이어야 하는데 DecoderLayer 가 "
                "항상 먼저 정규화(Pre-LN)합니다.",
        replace=(("if self.norm_first:", "if True:"),),
    ),
    Mutant(
        id="decoder_always_post_ln",
        exercise="decoder",
        hint_en="DecoderLayer normalises after the residual addition (Post-LN) even when norm_first=True asks "
                "for Pre-LN: x = x + sublayer(norm(x)).",
        hint_ko="norm_first=True 이면 Pre-LN(x = x + sublayer(norm(x)))이어야 하는데 DecoderLayer 가 항상 "
                "더한 뒤 정규화(Post-LN)합니다.",
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
