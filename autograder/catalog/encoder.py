"""Known mistakes in exercise 7 (encoder.py), as patches of ``solutions/encoder.py``."""

from autograder.catalog import Mutant

_POST_ATTN = "x = self.norm1(x + self.dropout1(attended))"
_POST_FF = "x = self.norm2(x + self.dropout2(self.feed_forward(x)))"

MUTANTS = [
    Mutant(
        id="encoder_always_pre_ln",
        exercise="encoder",
        hint_en="EncoderLayer normalises before each sub-layer (Pre-LN) even when norm_first=False asks "
                "for the paper's Post-LN: x = norm(x + sublayer(x)).",
        hint_ko="norm_first=False 이면 논문의 Post-LN(x = norm(x + sublayer(x)))이어야 하는데 EncoderLayer 가 "
                "항상 먼저 정규화(Pre-LN)합니다.",
        replace=(("if self.norm_first:", "if True:"),),
    ),
    Mutant(
        id="encoder_always_post_ln",
        exercise="encoder",
        hint_en="EncoderLayer normalises after the residual addition (Post-LN) even when norm_first=True asks "
                "for Pre-LN: x = x + sublayer(norm(x)).",
        hint_ko="norm_first=True 이면 Pre-LN(x = x + sublayer(norm(x)))이어야 하는데 EncoderLayer 가 항상 "
                "더한 뒤 정규화(Post-LN)합니다.",
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
