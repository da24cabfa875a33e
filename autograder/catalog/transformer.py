"""Known mistakes of exercise 9, ``transformer.py`` (see :mod:`autograder.catalog`)."""

from autograder.catalog import Mutant

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
]
