"""Known mistakes of exercise 9, ``transformer.py`` (see :mod:`autograder.mistakes.catalog`): patches of
``solutions/transformer.py``. ``transformer_no_causal_mask`` is also used by the training tests."""

from autograder.mistakes import catalog, families
from autograder.mistakes.catalog import Degenerate, Mutant

_STEP = "next_token = torch.where(finished, torch.full_like(next_token, self.pad_id), next_token)"
_LOOP = "while ys.shape[1] < max_len and not bool(finished.all()):"

MUTANTS = [
    Mutant(
        id="transformer_no_causal_mask",
        exercise="transformer",
        hint_en="decode does not pass the causal mask to the decoder, so position t sees the target tokens "
                "after it (it learns to copy the next token in training and fails when generating)",
        hint_ko="decode 가 디코더에 인과 마스크를 넘기지 않아 위치 t 가 뒤쪽 타깃 토큰을 봅니다 (학습 때는 다음 토큰을 "
                "베끼고 생성할 때는 실패합니다)",
        replace=(("tgt_mask=causal,", "tgt_mask=None,"),),
    ),
    Mutant(
        id="transformer_no_memory_padding_mask",
        exercise="transformer",
        hint_en="decode does not pass the source padding mask as memory_key_padding_mask, so cross-attention "
                "attends to source padding.",
        hint_ko="decode 가 소스 패딩 마스크를 memory_key_padding_mask 로 넘기지 않아 크로스 어텐션이 소스 패딩을 "
                "참조합니다.",
        replace=(("memory_key_padding_mask=make_padding_mask(src, self.pad_id),", "memory_key_padding_mask=None,"),),
    ),
    Mutant(
        id="transformer_no_source_padding_mask",
        exercise="transformer",
        hint_en="encode runs the encoder without the source padding mask, so source tokens attend to padding.",
        hint_ko="encode 가 소스 패딩 마스크 없이 인코더를 실행해 소스 토큰이 패딩을 참조합니다.",
        replace=(("return self.encoder(self.pos_encoding(self.src_embed(src)), key_padding_mask=src_padding)",
                  "return self.encoder(self.pos_encoding(self.src_embed(src)))"),),
    ),
    Mutant(
        id="transformer_greedy_no_pad_after_eos",
        exercise="transformer",
        hint_en="After a row has produced eos_id, greedy_decode keeps appending predicted tokens; it must "
                "append pad_id to that row.",
        hint_ko="eos_id 를 낸 행에도 greedy_decode 가 예측 토큰을 계속 붙입니다. 그 행에는 pad_id 를 붙여야 합니다.",
        replace=((_STEP, "next_token = next_token"),),
    ),
    Mutant(
        id="transformer_greedy_ignores_eos",
        exercise="transformer",
        hint_en="greedy_decode ignores eos_id: it neither pads the rows that ended nor stops when every row "
                "has produced eos_id.",
        hint_ko="greedy_decode 가 eos_id 를 무시합니다: 끝난 행을 패딩으로 채우지도, 모든 행이 eos_id 를 냈을 때 "
                "멈추지도 않습니다.",
        replace=((_STEP, "next_token = next_token"), (_LOOP, "while ys.shape[1] < max_len:")),
    ),
    Mutant(
        id="transformer_greedy_drops_bos",
        exercise="transformer",
        hint_en="greedy_decode returns the generated tokens without the BOS column; column 0 must be bos_id "
                "(and it counts towards max_len).",
        hint_ko="greedy_decode 가 BOS 열을 빼고 돌려줍니다. 0번 열은 bos_id 여야 합니다(max_len 에도 포함).",
        replace=(("        return ys\n", "        return ys[:, 1:]\n"),),
    ),
    Mutant(
        id="transformer_greedy_sets_eval",
        exercise="transformer",
        hint_en="greedy_decode switches the model to eval mode (self.eval()); it must leave the train/eval "
                "mode as the caller set it.",
        hint_ko="greedy_decode 가 모델을 eval 모드로 바꿉니다(self.eval()). 호출한 쪽이 정한 train/eval 모드를 "
                "그대로 두어야 합니다.",
        replace=(("        with torch.no_grad():\n            memory = self.encode(src)",
                  "        self.eval()\n        with torch.no_grad():\n            memory = self.encode(src)"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
_SRC_PE = "self.pos_encoding(self.src_embed(src))"
_TGT_PE = "self.pos_encoding(self.tgt_embed(tgt))"

MUTANTS += [
    # Source: CasualGANPapers/Make-A-Scene#6 (the next token read from the logits at the wrong position).
    Mutant(
        id="transformer_greedy_first_position_logits",
        exercise="transformer",
        hint_en="greedy_decode picks the next token from the logits of the first position; use the last "
                "position's logits ([:, -1])",
        hint_ko="greedy_decode 가 첫 위치의 로짓으로 다음 토큰을 고릅니다. 마지막 위치의 로짓([:, -1])을 쓰세요",
        replace=(("logits = self.generator(self.decode(ys, memory, src)[:, -1])",
                  "logits = self.generator(self.decode(ys, memory, src)[:, 0])"),),
    ),
    # Source: Exorust/TorchLeet#5 and IBM/TabFormer#14 (batch-first tensors given to a sequence-first
    # module); here the embeddings go through the positional encoding sequence-first, so every token
    # of example b gets position b's encoding.
    Mutant(
        id="transformer_mixed_layout",
        exercise="transformer",
        hint_en="the embeddings reach the positional encoding as [S, B, d_model] (sequence first) while the "
                "kit is batch first [B, S, d_model]: every token of example b gets the encoding of position b, "
                "and swapping two examples changes their outputs",
        hint_ko="임베딩을 [S, B, d_model] (시퀀스 우선)으로 위치 인코딩에 넘겼지만 이 키트는 배치 우선 [B, S, d_model] "
                "입니다. 예제 b 의 모든 토큰이 위치 b 의 인코딩을 받고, 두 예제를 바꾸면 출력이 달라집니다",
        replace=((_SRC_PE, "self.pos_encoding(self.src_embed(src).transpose(0, 1)).transpose(0, 1)"),
                 (_TGT_PE, "self.pos_encoding(self.tgt_embed(tgt).transpose(0, 1)).transpose(0, 1)")),
    ),
    # Source: DSKSD/DeepNLP-models-Pytorch#2 and bowang-lab/Transformer-GCN-QA#32 (softmax applied to
    # the model's output although the loss expects logits).
    Mutant(
        id="transformer_returns_softmax",
        exercise="transformer",
        hint_en="forward returns softmax probabilities; it must return the generator's logits (the loss and "
                "argmax take logits)",
        hint_ko="forward 가 softmax 확률을 반환합니다. generator 의 로짓을 반환해야 합니다 (손실과 argmax 는 로짓을 받습니다)",
        replace=(("return self.generator(self.decode(tgt, self.encode(src), src))",
                  "return torch.softmax(self.generator(self.decode(tgt, self.encode(src), src)), dim=-1)"),),
    ),
    # Source: Lightning-AI/pytorch-lightning#20099 ("positional encoding not used in Demo Transformer").
    Mutant(
        id="transformer_no_positional_encoding",
        exercise="transformer",
        hint_en="the positional encoding is never added: encode and decode must pass the embeddings through "
                "pos_encoding",
        hint_ko="위치 인코딩을 더하지 않았습니다. encode 와 decode 에서 임베딩을 pos_encoding 에 통과시켜야 합니다",
        replace=((_SRC_PE, "self.src_embed(src)"), (_TGT_PE, "self.tgt_embed(tgt)")),
    ),
]

# Classes of mistakes: mask polarity and dtype where the Transformer builds its masks.
_CAUSAL = "causal = make_causal_mask(tgt.shape[1], device=tgt.device)"
MUTANTS += [
    # Source: the Annotated Transformer's masks are True = keep ((src != pad).unsqueeze(-2)).
    Mutant(
        id="transformer_padding_masks_inverted",
        exercise="transformer",
        hint_en="the Transformer's padding masks are True at real tokens (src != pad, True = keep, as in the "
                "Annotated Transformer); in this kit True = padding, blocked: make_padding_mask(src, pad_id)",
        hint_ko="Transformer 의 패딩 마스크가 실제 토큰에서 True 입니다 (src != pad, True = 남김, Annotated "
                "Transformer 의 방식). 이 키트에서 True = 패딩(가려짐)입니다: make_padding_mask(src, pad_id)",
        replace=(("src_padding = make_padding_mask(src, self.pad_id)", "src_padding = src != self.pad_id"),
                 ("tgt_key_padding_mask=make_padding_mask(tgt, self.pad_id),", "tgt_key_padding_mask=tgt != self.pad_id,"),
                 ("memory_key_padding_mask=make_padding_mask(src, self.pad_id),",
                  "memory_key_padding_mask=src != self.pad_id,")),
    ),
    Mutant(
        id="transformer_causal_mask_inverted",
        exercise="transformer",
        hint_en="the causal mask is True where a position may look (torch.tril, True = keep); in this kit True = "
                "blocked, the future j > i: make_causal_mask(T)",
        hint_ko="인과 마스크가 볼 수 있는 위치에서 True 입니다 (torch.tril, True = 남김). 이 키트에서 True = 가려짐, "
                "즉 미래 j > i 입니다: make_causal_mask(T)",
        replace=((_CAUSAL, "causal = torch.tril(torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool, "
                           "device=tgt.device))"),),
    ),
    # Source: a real submission (a float causal mask, torch.triu(torch.ones(T, T), 1), passed where a bool one is expected).
    Mutant(
        id="transformer_causal_mask_float",
        exercise="transformer",
        hint_en="the causal mask is a float 0/1 matrix (torch.triu(torch.ones(T, T), 1)); a float mask is added to "
                "the scores, so 1 does not block anything: build it as bool (dtype=torch.bool, or make_causal_mask)",
        hint_ko="인과 마스크가 0/1 실수 행렬입니다 (torch.triu(torch.ones(T, T), 1)). 실수 마스크는 점수에 더해지므로 "
                "1 은 아무것도 막지 못합니다. bool 로 만드세요 (dtype=torch.bool, 또는 make_causal_mask)",
        replace=((_CAUSAL, "causal = torch.triu(torch.ones(tgt.shape[1], tgt.shape[1], device=tgt.device), "
                           "diagonal=1)"),),
    ),
]

# Families (autograder.mistakes.families): max_len counted as new tokens (a convention), the output's form.
_FORWARD = "return self.generator(self.decode(tgt, self.encode(src), src))"
MUTANTS += catalog.generated("length", families.GREEDY_LENGTH, lambda v: (
    (_LOOP, "while ys.shape[1] <= max_len and not bool(finished.all()):"),))
MUTANTS += catalog.generated("output", families.TRANSFORMER_OUTPUT, lambda v: (
    (_FORWARD, "return " + v.code.format(logits="self.generator(self.decode(tgt, self.encode(src), src))")),))


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("Transformer.encode", "Transformer.decode", "Transformer.forward")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("transformer_ignores_source", "transformer", "a language model of the target: the memory is zeros", """
def _encode(self, src):
    return torch.zeros_like(self.src_embed(src))
Transformer.encode = _encode
"""),
    Degenerate("transformer_current_token_only", "transformer",
               "logits from the current target token alone (source and earlier tokens ignored)", """
def _encode(self, src):
    return self.src_embed(src)
def _decode(self, tgt, memory, src):
    return self.tgt_embed(tgt)
Transformer.encode = _encode
Transformer.decode = _decode
"""),
)
