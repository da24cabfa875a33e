# Generated from solutions/transformer.py by tkit; edit the TODOs below (tkit 이 solutions 에서 생성한 파일입니다. TODO 부분을 채우세요).
"""Exercise 9: the whole Transformer (전체 트랜스포머).

English
-------
Vaswani et al. (2017), "Attention Is All You Need", figure 1: source tokens are embedded (scaled
by ``sqrt(d_model)``), get positional encodings and go through the encoder; target tokens, shifted
right so that they start with a beginning-of-sequence token, are embedded the same way and go
through the decoder, which attends to the encoder output ``memory``; a final linear layer (the
"generator") turns each decoder vector into logits over the target vocabulary.

This class builds the masks itself from the token ids: padding masks from ``pad_id`` (True at
padding) for the source and the target, and the causal mask for the decoder's self-attention.
``greedy_decode`` generates a translation one token at a time, always taking the most likely token
(the argmax). Reuse ``TokenEmbedding``, ``PositionalEncoding``, the ``masks`` functions,
``Encoder`` and ``Decoder``; ``nn.Transformer*`` classes may not be used.

한국어
------
Vaswani 외 (2017) 그림 1: 소스 토큰은 임베딩(``sqrt(d_model)`` 배) + 위치 인코딩을 거쳐 인코더로
들어갑니다. 타깃 토큰(시작 토큰으로 시작하도록 오른쪽으로 한 칸 민 것)도 같은 방식으로
임베딩되어 디코더로 들어가며, 디코더는 인코더 출력 ``memory`` 를 참조합니다. 마지막 선형층
(generator)이 각 위치를 타깃 어휘에 대한 로짓으로 바꿉니다. 이 클래스는 토큰 id 로부터 마스크를
직접 만듭니다(``pad_id`` 로 패딩 마스크, 디코더용 인과 마스크). ``greedy_decode`` 는 매 단계 가장
확률이 높은 토큰(argmax)을 골라 한 토큰씩 생성합니다. ``nn.Transformer*`` 는 쓸 수 없습니다.
"""

import torch
from torch import nn

from decoder import Decoder
from embedding import TokenEmbedding
from encoder import Encoder
from masks import make_causal_mask, make_padding_mask
from positional_encoding import PositionalEncoding


class Transformer(nn.Module):
    """Encoder-decoder Transformer for sequence-to-sequence tasks (인코더-디코더 트랜스포머).

    Args:
        src_vocab_size, tgt_vocab_size: vocabulary sizes (소스/타깃 어휘 크기).
        d_model: model width (모델 차원), even and divisible by ``num_heads``.
        num_heads: attention heads (헤드 수).
        num_encoder_layers, num_decoder_layers: stack depths (층 수).
        d_ff: feed-forward hidden width.
        dropout: dropout probability everywhere (positional encoding, attention, sub-layers).
        max_len: longest sequence the positional encoding supports.
        pad_id: id of the padding token in both vocabularies; it is the embeddings'
            ``padding_idx`` and positions holding it are masked as keys.

    Attributes:
        src_embed, tgt_embed: ``TokenEmbedding`` (with ``padding_idx=pad_id``).
        pos_encoding: one ``PositionalEncoding(d_model, max_len, dropout)`` shared by both sides.
        encoder: ``Encoder`` (Post-LN, as in the paper).
        decoder: ``Decoder`` (Post-LN).
        generator: ``nn.Linear(d_model, tgt_vocab_size)``.
        pad_id: the padding id.

    Raises:
        ValueError: from the components (odd ``d_model``, ``d_model % num_heads != 0``,
            ``pad_id`` outside a vocabulary, ...).

    Training check: the grader records one call of ``forward(src, tgt)`` (in training and in
    eval mode, on sequences it picks, at its batch and sequence lengths) as the ATen operators it
    runs, re-draws the parameters and trains that recording with its own loop. A Python ``if`` on
    tensor values is evaluated once, while recording (a range check that raises is fine; to compute
    differently by value, use ``torch.where``); the module's own constants (buffers, tensors made
    outside its methods, numbers in operator arguments) may hold at most 16,384 32-bit words, and
    a recorded call may not write into the module's parameters, buffers or inputs.
    (학습 채점: 채점기는 ``forward`` 한 번의 계산을 ATen 연산으로 기록하고 매개변수를 새로 뽑아 자신의
    루프로 학습합니다. 텐서 값에 대한 Python ``if`` 는 기록할 때 한 번만 평가됩니다.)

    Source: Vaswani et al. 2017, "Attention Is All You Need", section 3 and figure 1.
    """

    def __init__(
        self,
        src_vocab_size,
        tgt_vocab_size,
        d_model=512,
        num_heads=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        d_ff=2048,
        dropout=0.1,
        max_len=5000,
        pad_id=0,
    ):
        """Create the embeddings, positional encoding, encoder, decoder and generator."""
        super().__init__()
        # TODO: build src_embed, tgt_embed (padding_idx=pad_id), pos_encoding, encoder, decoder and generator; keep pad_id.
        # 할 일: src_embed, tgt_embed (padding_idx=pad_id), pos_encoding, encoder, decoder, generator 를 만들고 pad_id 를 저장하세요.
        raise NotImplementedError("transformer: Transformer.__init__ is not implemented yet (아직 구현되지 않았습니다)")

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """Encode the source (소스를 인코딩).

        Args:
            src: ``LongTensor[B, S]`` of source ids (padding = ``pad_id``).

        Returns:
            memory ``Tensor[B, S, d_model]``.
        """
        # TODO: embed src, add positional encoding, run the encoder with the source padding mask.
        # 할 일: src 를 임베딩하고 위치 인코딩을 더한 뒤 소스 패딩 마스크와 함께 인코더에 넣으세요.
        raise NotImplementedError("transformer: Transformer.encode is not implemented yet (아직 구현되지 않았습니다)")

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        """Decode the target given the encoder output (인코더 출력을 참조해 타깃을 디코딩).

        Args:
            tgt: ``LongTensor[B, T]`` of target ids, starting with the BOS token.
            memory: ``Tensor[B, S, d_model]`` from ``encode``.
            src: the ``LongTensor[B, S]`` that produced ``memory`` (for its padding mask).

        Returns:
            ``Tensor[B, T, d_model]``; position ``t`` depends only on ``tgt[:, :t+1]``.
        """
        # TODO: embed tgt and add positional encoding; run the decoder with the causal mask, the target padding mask and the source padding mask.
        # 할 일: tgt 를 임베딩하고 위치 인코딩을 더한 뒤 인과 마스크, 타깃 패딩 마스크, 소스 패딩 마스크와 함께 디코더에 넣으세요.
        raise NotImplementedError("transformer: Transformer.decode is not implemented yet (아직 구현되지 않았습니다)")

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Logits for every target position (타깃의 각 위치에 대한 로짓).

        Args:
            src: ``LongTensor[B, S]``.
            tgt: ``LongTensor[B, T]`` (teacher forcing input: BOS followed by the shifted target).

        Returns:
            ``Tensor[B, T, tgt_vocab_size]``.
        """
        # TODO: encode src, decode tgt against the memory, apply the generator.
        # 할 일: src 를 encode 하고 memory 로 tgt 를 decode 한 뒤 generator 를 적용하세요.
        raise NotImplementedError("transformer: Transformer.forward is not implemented yet (아직 구현되지 않았습니다)")

    def greedy_decode(self, src: torch.Tensor, bos_id: int, eos_id: int, max_len: int) -> torch.Tensor:
        """Generate target ids greedily, one token per step (매 단계 argmax 로 한 토큰씩 생성).

        Column 0 is ``bos_id``; each step appends the argmax of the last position's logits. Once a
        row has produced ``eos_id``, the rest of that row is ``pad_id``. Decoding stops when every
        row has produced ``eos_id`` or the length (counting the BOS column) reaches ``max_len``.
        A predicted ``pad_id`` is just a token. The module's train/eval mode is left as it is:
        call ``eval()`` first for deterministic output. No gradients are recorded.

        (0번 열은 ``bos_id``. 매 단계 마지막 위치 로짓의 argmax 를 붙입니다. ``eos_id`` 를 낸 행은
        그 뒤를 ``pad_id`` 로 채웁니다. 모든 행이 ``eos_id`` 를 냈거나 길이(BOS 포함)가
        ``max_len`` 이 되면 멈춥니다. train/eval 모드는 바꾸지 않습니다.)

        Args:
            src: ``LongTensor[B, S]``.
            bos_id, eos_id: beginning- and end-of-sequence ids.
            max_len: maximum output length including the BOS column, ``>= 1``.

        Returns:
            ``LongTensor[B, L]`` on ``src``'s device with ``1 <= L <= max_len``.

        Raises:
            ValueError: ``max_len < 1``.
        """
        # TODO: encode once; start from a [B, 1] column of bos_id; loop: decode, argmax of the last position, pad_id for finished rows, append; stop when all rows finished or length == max_len.
        # 할 일: 한 번 encode 하고 bos_id 로 된 [B, 1] 에서 시작해, decode -> 마지막 위치 argmax -> 끝난 행은 pad_id -> 붙이기를 반복하세요. 모든 행이 끝나거나 길이가 max_len 이면 멈춥니다.
        raise NotImplementedError("transformer: Transformer.greedy_decode is not implemented yet (아직 구현되지 않았습니다)")
