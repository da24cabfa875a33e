"""The twelve exercises of exercises/README.md: order, points (100 in all) and components.

``depends`` lists the exercises whose student modules a composite imports, so that a
composite's failure can point at a failing component.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The end of every stub's ``NotImplementedError`` message ("<exercise>: <name> is not implemented
#: yet (...)", written by :mod:`autograder.exports.stubs`); reports drop it and say it in their language.
STUB_NOT_IMPLEMENTED = "is not implemented yet (아직 구현되지 않았습니다)"


@dataclass(frozen=True)
class Exercise:
    name: str          # module name: exercises/<name>.py
    title_en: str
    title_ko: str
    points: float      # share of the 100 points, public and hidden tests together
    depends: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The title in the current language (:func:`autograder.i18n.authored`)."""
        from autograder.i18n import authored

        return authored(self.title_en, self.title_ko)


EXERCISES: tuple[Exercise, ...] = (
    Exercise("embedding", "Token embedding", "토큰 임베딩", 5),
    Exercise("positional_encoding", "Sinusoidal positional encoding", "사인파 위치 인코딩", 8),
    Exercise("masks", "Padding and causal masks", "패딩 마스크와 인과 마스크", 8),
    Exercise("attention", "Scaled dot-product attention", "스케일드 닷-프로덕트 어텐션", 10, ("masks",)),
    Exercise("multi_head_attention", "Multi-head attention", "멀티-헤드 어텐션", 12, ("attention", "masks")),
    Exercise("feed_forward", "Position-wise feed-forward", "포지션별 피드포워드", 5),
    Exercise("encoder", "Encoder layer and encoder", "인코더 층과 인코더", 10,
             ("multi_head_attention", "feed_forward", "attention", "masks")),
    Exercise("decoder", "Decoder layer and decoder", "디코더 층과 디코더", 10,
             ("multi_head_attention", "feed_forward", "attention", "masks")),
    Exercise("transformer", "Encoder-decoder Transformer", "인코더-디코더 트랜스포머", 11,
             ("embedding", "positional_encoding", "masks", "encoder", "decoder",
              "multi_head_attention", "feed_forward", "attention")),
    Exercise("rope", "Rotary position embedding (bonus)", "회전 위치 임베딩 (보너스)", 6),
    Exercise("autoencoder", "Convolutional AutoEncoder on MNIST", "MNIST 합성곱 오토인코더", 12),
    Exercise("seq2seq_training", "Training the Transformer: teacher forcing and a loss without PAD",
             "트랜스포머 학습: 티처 포싱과 PAD 를 뺀 손실", 3),
)

BY_NAME = {e.name: e for e in EXERCISES}
NAMES = tuple(e.name for e in EXERCISES)


def get(name: str) -> Exercise:
    """The exercise called ``name``; ValueError lists the valid names."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown exercise {name!r}; choose from: {', '.join(NAMES)}") from None


def total_points() -> float:
    return sum(e.points for e in EXERCISES)
