"""The reference solutions checked against sources nobody in this kit wrote.

Oracles: PyTorch's own modules with copied weights (``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer``/``DecoderLayer``, ``F.scaled_dot_product_attention``), the formulas
of Vaswani et al. 2017 and Su et al. 2021 evaluated in float64, the masked-softmax values printed
in the source tutorial, and properties (causality, padding invariance, norm preservation).
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

torch.set_num_threads(min(2, torch.get_num_threads()))

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)


# ----------------------------------------------------------------------------- helpers


def copy_mha(ours, theirs):
    """Load an ``nn.MultiheadAttention``'s weights into a kit ``MultiHeadAttention``."""
    d = theirs.embed_dim
    with torch.no_grad():
        w = theirs.in_proj_weight
        ours.q_proj.weight.copy_(w[:d])
        ours.k_proj.weight.copy_(w[d : 2 * d])
        ours.v_proj.weight.copy_(w[2 * d :])
        ours.out_proj.weight.copy_(theirs.out_proj.weight)
        if theirs.in_proj_bias is not None:
            b = theirs.in_proj_bias
            ours.q_proj.bias.copy_(b[:d])
            ours.k_proj.bias.copy_(b[d : 2 * d])
            ours.v_proj.bias.copy_(b[2 * d :])
            ours.out_proj.bias.copy_(theirs.out_proj.bias)
        else:
            assert ours.q_proj.bias is None and ours.out_proj.bias is None


def randomize(module, scale=0.2):
    """Perturb every parameter so that copying really copies (LayerNorm starts at 1/0)."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn_like(p) * scale)


def copy_ff_and_norms(ours, theirs, num_norms):
    with torch.no_grad():
        ours.feed_forward.linear1.load_state_dict(theirs.linear1.state_dict())
        ours.feed_forward.linear2.load_state_dict(theirs.linear2.state_dict())
        for i in range(1, num_norms + 1):
            getattr(ours, f"norm{i}").load_state_dict(getattr(theirs, f"norm{i}").state_dict())


def copy_encoder_layer(ours, theirs):
    copy_mha(ours.self_attn, theirs.self_attn)
    copy_ff_and_norms(ours, theirs, 2)


def copy_decoder_layer(ours, theirs):
    copy_mha(ours.self_attn, theirs.self_attn)
    copy_mha(ours.cross_attn, theirs.multihead_attn)
    copy_ff_and_norms(ours, theirs, 3)


def visible_masks(batch, q_len, k_len):
    """A random attn_mask and key_padding_mask that leave every query at least one key."""
    attn_mask = torch.rand(q_len, k_len) < 0.4
    attn_mask[:, 0] = False
    key_padding_mask = torch.zeros(batch, k_len, dtype=torch.bool)
    key_padding_mask[0, -2:] = True
    key_padding_mask[-1, -1] = True
    return attn_mask, key_padding_mask


# ----------------------------------------------------------------------------- embedding


def test_token_embedding_scales_by_sqrt_d_model(ref):
    emb = ref.embedding.TokenEmbedding(10, 16)
    ids = torch.tensor([[1, 2, 3], [9, 0, 4]])
    out = emb(ids)
    assert out.shape == (2, 3, 16)
    torch.testing.assert_close(out, emb.embedding.weight[ids] * 4.0)
    assert isinstance(emb.embedding, nn.Embedding)
    assert ref.embedding.InputEmbeddings is ref.embedding.TokenEmbedding


def test_token_embedding_padding_idx(ref):
    emb = ref.embedding.TokenEmbedding(7, 4, padding_idx=0)
    assert emb.embedding.padding_idx == 0
    ids = torch.tensor([[0, 3, 0, 5]])
    out = emb(ids)
    assert torch.equal(out[0, 0], torch.zeros(4)) and torch.equal(out[0, 2], torch.zeros(4))
    out.sum().backward()
    assert torch.equal(emb.embedding.weight.grad[0], torch.zeros(4))
    assert torch.all(emb.embedding.weight.grad[3] == 2.0)  # d sqrt(4) per use


def test_token_embedding_follows_weight_dtype(ref):
    emb = ref.embedding.TokenEmbedding(5, 6).double()
    assert emb(torch.tensor([[1, 2]])).dtype == torch.float64


def test_token_embedding_errors(ref):
    with pytest.raises(ValueError, match=r"vocab_size.*0"):
        ref.embedding.TokenEmbedding(0, 4)
    with pytest.raises(ValueError, match=r"d_model.*-1"):
        ref.embedding.TokenEmbedding(5, -1)
    with pytest.raises(ValueError, match=r"padding_idx=5.*vocab_size=5"):
        ref.embedding.TokenEmbedding(5, 4, padding_idx=5)
    emb = ref.embedding.TokenEmbedding(5, 4)
    with pytest.raises(ValueError, match=r"token_ids.*float32"):
        emb(torch.zeros(1, 2))
    with pytest.raises(ValueError, match=r"token_ids.*max=7.*vocab_size=5"):
        emb(torch.tensor([[1, 7]]))


# ----------------------------------------------------------------------------- positional encoding


def formula_table(max_len, d_model):
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        freq = 10000.0 ** (2 * i / d_model)
        pos = torch.arange(max_len, dtype=torch.float64)
        pe[:, 2 * i] = torch.sin(pos / freq)
        pe[:, 2 * i + 1] = torch.cos(pos / freq)
    return pe


def test_sinusoidal_table_matches_formula(ref):
    table = ref.positional_encoding.sinusoidal_table(5000, 64)
    assert table.shape == (5000, 64) and table.dtype == torch.float32 and table.device.type == "cpu"
    exact = formula_table(5000, 64)
    torch.testing.assert_close(table[:100].double(), exact[:100], atol=1e-6, rtol=0)
    torch.testing.assert_close(table.double(), exact, atol=5e-4, rtol=0)
    # Hand-checked entries: PE[1, 0] = sin(1), PE[1, 1] = cos(1), PE[0] = [0, 1, 0, 1, ...].
    assert table[1, 0].item() == pytest.approx(math.sin(1.0), abs=1e-7)
    assert table[1, 1].item() == pytest.approx(math.cos(1.0), abs=1e-7)
    assert torch.equal(table[0, 0::2], torch.zeros(32)) and torch.equal(table[0, 1::2], torch.ones(32))


def test_positional_encoding_buffer_and_forward(ref):
    pe = ref.positional_encoding.PositionalEncoding(8, max_len=50)
    assert pe.pe.shape == (1, 50, 8) and pe.pe.dtype == torch.float32
    assert "pe" in pe.state_dict() and len(list(pe.parameters())) == 0
    x = torch.randn(2, 7, 8)
    torch.testing.assert_close(pe(x), x + formula_table(7, 8).float()[None])
    out64 = pe(x.double())
    assert out64.dtype == torch.float64
    torch.testing.assert_close(out64, x.double() + formula_table(50, 8)[None, :7], atol=1e-6, rtol=0)
    pe64 = pe.to(torch.float64)
    assert pe64.pe.dtype == torch.float64  # follows .to()


def test_positional_encoding_dropout_only_in_training(ref):
    pe = ref.positional_encoding.PositionalEncoding(8, max_len=20, dropout=0.5)
    x = torch.randn(3, 10, 8)
    pe.eval()
    torch.testing.assert_close(pe(x), x + pe.pe[:, :10])
    pe.train()
    assert (pe(x) == 0).sum() > 0


def test_positional_encoding_errors(ref):
    with pytest.raises(ValueError, match=r"d_model.*d_model=7"):
        ref.positional_encoding.sinusoidal_table(10, 7)
    with pytest.raises(ValueError, match=r"d_model.*d_model=5"):
        ref.positional_encoding.PositionalEncoding(5)
    with pytest.raises(ValueError, match=r"max_len.*max_len=0"):
        ref.positional_encoding.sinusoidal_table(0, 8)
    pe = ref.positional_encoding.PositionalEncoding(8, max_len=6)
    with pytest.raises(ValueError, match=r"S=7.*max_len=6"):
        pe(torch.zeros(1, 7, 8))


# ----------------------------------------------------------------------------- masks


def test_padding_and_causal_masks(ref):
    ids = torch.tensor([[5, 3, 0, 0], [0, 2, 9, 1]])
    assert torch.equal(
        ref.masks.make_padding_mask(ids),
        torch.tensor([[False, False, True, True], [True, False, False, False]]),
    )
    assert torch.equal(ref.masks.make_padding_mask(ids, pad_id=9)[1], torch.tensor([False, False, True, False]))
    causal = ref.masks.make_causal_mask(4)
    assert causal.dtype == torch.bool
    assert torch.equal(
        causal,
        torch.tensor(
            [
                [False, True, True, True],
                [False, False, True, True],
                [False, False, False, True],
                [False, False, False, False],
            ]
        ),
    )
    # Same convention as PyTorch's own causal mask (-inf above the diagonal).
    assert torch.equal(causal, torch.isinf(nn.Transformer.generate_square_subsequent_mask(4)))
    for device in DEVICES:
        assert ref.masks.make_causal_mask(3, device=device).device.type == device
    with pytest.raises(ValueError, match=r"size.*-1"):
        ref.masks.make_causal_mask(-1)


def test_masked_softmax_tutorial_values(ref):
    scores = torch.tensor([[2.0, 1.0, 0.5, 3.0]])
    mask = torch.tensor([[False, False, False, True]])
    out = ref.masks.masked_softmax(scores, mask)
    torch.testing.assert_close(out, torch.tensor([[0.6285, 0.2312, 0.1402, 0.0000]]), atol=1e-4, rtol=0)
    assert out[0, 3].item() == 0.0
    torch.testing.assert_close(ref.masks.masked_softmax(scores, None), torch.softmax(scores, -1))


def test_masked_softmax_fully_masked_rows_are_zero_with_finite_grads(ref):
    scores = torch.randn(2, 3, 5, requires_grad=True)
    mask = torch.zeros(2, 3, 5, dtype=torch.bool)
    mask[0, 1] = True  # a fully blocked row
    mask[1, :, 2:] = True
    out = ref.masks.masked_softmax(scores, mask)
    assert torch.equal(out[0, 1], torch.zeros(5))
    torch.testing.assert_close(out.sum(-1)[0, [0, 2]], torch.ones(2))
    expected = torch.zeros(3, 5)
    expected[:, :2] = torch.softmax(scores[1, :, :2].detach(), -1)
    torch.testing.assert_close(out[1], expected)
    (out * torch.randn_like(out)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.equal(scores.grad[0, 1], torch.zeros(5))


def test_masked_softmax_broadcasts_and_rejects_bad_masks(ref):
    scores = torch.randn(2, 4, 3, 5)
    mask = torch.tensor([False, True, False, False, True])  # broadcast over everything
    out = ref.masks.masked_softmax(scores, mask)
    assert torch.all(out[..., [1, 4]] == 0)
    out64 = ref.masks.masked_softmax(scores.double(), mask)
    assert out64.dtype == torch.float64
    with pytest.raises(ValueError, match=r"mask.*\(4,\).*scores.*\(2, 4, 3, 5\)"):
        ref.masks.masked_softmax(scores, torch.zeros(4, dtype=torch.bool))


def test_combine_masks_shapes_and_values(ref):
    attn = torch.tensor([[False, True, False], [False, False, True]])  # [S_q=2, S_k=3]
    pad = torch.tensor([[False, False, True], [True, False, False]])  # [B=2, S_k=3]
    both = ref.masks.combine_masks(attn, pad)
    assert both.shape == (2, 1, 2, 3) and both.dtype == torch.bool
    assert torch.equal(both[:, 0], attn[None] | pad[:, None])
    assert ref.masks.combine_masks(attn, None).shape == (1, 1, 2, 3)
    assert torch.equal(ref.masks.combine_masks(attn, None)[0, 0], attn)
    only_pad = ref.masks.combine_masks(None, pad)
    assert only_pad.shape == (2, 1, 1, 3) and torch.equal(only_pad[:, 0, 0], pad)
    assert ref.masks.combine_masks(None, None) is None
    with pytest.raises(ValueError, match=r"attn_mask.*\(1, 2, 3\)"):
        ref.masks.combine_masks(attn[None], pad)
    with pytest.raises(ValueError, match=r"key_padding_mask.*\(3,\)"):
        ref.masks.combine_masks(attn, pad[0])
    with pytest.raises(ValueError, match=r"S_k.*\(2, 3\).*\(2, 4\)"):
        ref.masks.combine_masks(attn, torch.zeros(2, 4, dtype=torch.bool))


# ----------------------------------------------------------------------------- attention


@pytest.mark.parametrize("shape", [(3, 4, 6, 8), (2, 3, 5, 6, 8)], ids=["3d", "4d"])
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_matches_pytorch(ref, shape, masked):
    *lead, s_q, s_k, d = shape
    q = torch.randn(*lead, s_q, d)
    k = torch.randn(*lead, s_k, d)
    v = torch.randn(*lead, s_k, d + 2)
    mask = None
    if masked:
        mask = torch.rand(*lead, s_q, s_k) < 0.5
        mask[..., 0] = False  # every query keeps a key (PyTorch gives NaN otherwise)
    out, weights = ref.attention.scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    assert weights.shape == (*lead, s_q, s_k)
    manual = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d) + (0 if mask is None else mask * -1e9), -1)
    torch.testing.assert_close(weights, manual, atol=1e-6, rtol=1e-5)


def test_sdpa_fully_masked_row_and_float64(ref):
    q = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 5, 6, dtype=torch.float64, requires_grad=True)
    mask = torch.zeros(2, 3, 5, dtype=torch.bool)
    mask[1, 2] = True
    out, weights = ref.attention.scaled_dot_product_attention(q, k, v, mask)
    assert out.dtype == torch.float64 and weights.dtype == torch.float64
    assert torch.equal(out[1, 2], torch.zeros(6, dtype=torch.float64))
    assert torch.equal(weights[1, 2], torch.zeros(5, dtype=torch.float64))
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()


def test_sdpa_dropout_and_errors(ref):
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 8)
    _, w = ref.attention.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert (w == 0).any() and (w.sum(-1) - 1).abs().max() > 1e-3  # dropout rescales, rows no longer sum to 1
    _, w0 = ref.attention.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    torch.testing.assert_close(w0.sum(-1), torch.ones(2, 4))
    with pytest.raises(ValueError, match=r"d_k.*\(2, 4, 8\).*\(2, 6, 7\)"):
        ref.attention.scaled_dot_product_attention(q, torch.randn(2, 6, 7), v)
    with pytest.raises(ValueError, match=r"S_k.*\(2, 6, 8\).*\(2, 5, 8\)"):
        ref.attention.scaled_dot_product_attention(q, k, torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match=r"dropout_p.*1.5"):
        ref.attention.scaled_dot_product_attention(q, k, v, dropout_p=1.5)


# ----------------------------------------------------------------------------- multi-head attention


def test_split_and_merge_heads(ref):
    x = torch.randn(2, 5, 12)
    heads = ref.multi_head_attention.split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads[:, 1], x[..., 4:8])
    torch.testing.assert_close(ref.multi_head_attention.merge_heads(heads), x)
    with pytest.raises(ValueError, match=r"divisible by num_heads.*D=12, num_heads=5"):
        ref.multi_head_attention.split_heads(x, 5)
    with pytest.raises(ValueError, match=r"x.*\(2, 5\)"):
        ref.multi_head_attention.merge_heads(torch.randn(2, 5))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("average", [True, False])
@pytest.mark.parametrize("masks", ["none", "padding", "attn", "both"])
@pytest.mark.parametrize("kvdim", [None, 12], ids=["plain", "kdim_vdim_same"])
def test_mha_matches_pytorch(ref, bias, average, masks, kvdim):
    d, h, batch, s_q, s_k = 12, 3, 3, 4, 6
    theirs = nn.MultiheadAttention(d, h, bias=bias, batch_first=True, kdim=kvdim, vdim=kvdim)
    randomize(theirs)
    ours = ref.multi_head_attention.MultiHeadAttention(d, h, bias=bias)
    copy_mha(ours, theirs)
    assert ours.num_heads == 3 and ours.head_dim == 4
    query, key, value = torch.randn(batch, s_q, d), torch.randn(batch, s_k, d), torch.randn(batch, s_k, d)
    attn_mask, key_padding_mask = visible_masks(batch, s_q, s_k)
    kwargs = {
        "key_padding_mask": key_padding_mask if masks in ("padding", "both") else None,
        "attn_mask": attn_mask if masks in ("attn", "both") else None,
    }
    out, weights = ours(query, key, value, average_attn_weights=average, **kwargs)
    exp_out, exp_weights = theirs(query, key, value, average_attn_weights=average, **kwargs)
    torch.testing.assert_close(out, exp_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, exp_weights, atol=1e-6, rtol=1e-5)
    assert weights.shape == ((batch, s_q, s_k) if average else (batch, h, s_q, s_k))
    out_nw, none = ours(query, key, value, need_weights=False, **kwargs)
    assert none is None
    torch.testing.assert_close(out_nw, exp_out, atol=1e-5, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
def test_mha_accepts_3d_and_float_masks_like_pytorch(ref):
    d, h, batch, s_q, s_k = 8, 2, 2, 3, 5
    theirs = nn.MultiheadAttention(d, h, batch_first=True)
    randomize(theirs)
    ours = ref.multi_head_attention.MultiHeadAttention(d, h)
    copy_mha(ours, theirs)
    q, kv = torch.randn(batch, s_q, d), torch.randn(batch, s_k, d)
    mask3 = torch.rand(batch * h, s_q, s_k) < 0.4
    mask3[..., 0] = False
    pad = torch.tensor([[False] * 4 + [True], [False] * 5])
    for attn_mask in (mask3, torch.randn(s_q, s_k), mask3.float() * -1e4):
        out, w = ours(q, kv, kv, key_padding_mask=pad, attn_mask=attn_mask, average_attn_weights=False)
        exp_out, exp_w = theirs(q, kv, kv, key_padding_mask=pad, attn_mask=attn_mask, average_attn_weights=False)
        torch.testing.assert_close(out, exp_out, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(w, exp_w, atol=1e-6, rtol=1e-5)


def test_mha_fully_masked_row_gives_out_proj_bias(ref):
    mha = ref.multi_head_attention.MultiHeadAttention(8, 2)
    randomize(mha)
    q = torch.randn(2, 3, 8, requires_grad=True)
    kv = torch.randn(2, 4, 8, requires_grad=True)
    pad = torch.tensor([[True] * 4, [False, False, True, True]])
    out, weights = mha(q, kv, kv, key_padding_mask=pad)
    torch.testing.assert_close(out[0], mha.out_proj.bias.detach().expand(3, 8))
    assert torch.equal(weights[0], torch.zeros(3, 4))
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(3))
    out.sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(kv.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in mha.parameters())


def test_mha_float64_and_dropout_only_in_training(ref):
    theirs = nn.MultiheadAttention(8, 4, batch_first=True).double()
    ours = ref.multi_head_attention.MultiHeadAttention(8, 4, dropout=0.5).double()
    copy_mha(ours, theirs)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    ours.eval()
    out, w = ours(x, x, x)
    assert out.dtype == torch.float64 and w.dtype == torch.float64
    torch.testing.assert_close(out, theirs(x, x, x)[0], atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(ours(x, x, x)[0], out, atol=0, rtol=0)  # deterministic in eval
    ours.train()
    _, w_train = ours(x, x, x)
    assert (w_train == 0).any()
    assert not torch.allclose(w_train, w)


def test_mha_errors(ref):
    MHA = ref.multi_head_attention.MultiHeadAttention
    with pytest.raises(ValueError, match=r"d_model must be divisible by num_heads, got d_model=10, num_heads=3"):
        MHA(10, 3)
    mha = MHA(8, 2)
    q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"key_padding_mask.*\[2, 5\].*\(2, 3\)"):
        mha(q, kv, kv, key_padding_mask=torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"key_padding_mask.*\(5,\)"):
        mha(q, kv, kv, key_padding_mask=torch.zeros(5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"attn_mask.*\[3, 5\].*\(5, 3\)"):
        mha(q, kv, kv, attn_mask=torch.zeros(5, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"attn_mask.*\(2, 3, 5\)"):
        mha(q, kv, kv, attn_mask=torch.zeros(2, 3, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"query.*d_model=8.*\(2, 3, 6\)"):
        mha(torch.randn(2, 3, 6), kv, kv)
    with pytest.raises(ValueError, match=r"key and value.*S_k.*\(2, 5, 8\).*\(2, 4, 8\)"):
        mha(q, kv, torch.randn(2, 4, 8))


# ----------------------------------------------------------------------------- feed-forward, encoder, decoder


def test_feed_forward(ref):
    ff = ref.feed_forward.PositionwiseFeedForward(6, 10, dropout=0.3).eval()
    x = torch.randn(2, 4, 6)
    expected = ff.linear2(torch.relu(ff.linear1(x)))
    torch.testing.assert_close(ff(x), expected)
    assert ff.linear1.out_features == 10 and ff.linear2.in_features == 10
    assert isinstance(ff.dropout, nn.Dropout)
    torch.testing.assert_close(ff(x[:, 2:3]), ff(x)[:, 2:3])  # position-wise


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_pytorch(ref, norm_first):
    d, h, ff = 12, 3, 20
    theirs = nn.TransformerEncoderLayer(d, h, ff, dropout=0.1, activation="relu", batch_first=True, norm_first=norm_first)
    randomize(theirs)
    ours = ref.encoder.EncoderLayer(d, h, ff, dropout=0.1, norm_first=norm_first)
    copy_encoder_layer(ours, theirs)
    theirs.eval(), ours.eval()
    x = torch.randn(3, 5, d)
    pad = torch.zeros(3, 5, dtype=torch.bool)
    pad[0, 3:] = True
    pad[2, 4] = True
    # Grad mode is on and the weights require grad, so PyTorch takes its slow (reference) path.
    for mask in (None, pad):
        torch.testing.assert_close(ours(x, key_padding_mask=mask), theirs(x, src_key_padding_mask=mask), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_matches_pytorch(ref, norm_first):
    d, h, ff, n = 8, 2, 16, 2
    layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.1, batch_first=True, norm_first=norm_first)
    theirs = nn.TransformerEncoder(layer, n, norm=nn.LayerNorm(d) if norm_first else None, enable_nested_tensor=False)
    randomize(theirs)
    ours = ref.encoder.Encoder(n, d, h, ff, dropout=0.1, norm_first=norm_first)
    assert len(ours.layers) == n and (ours.norm is not None) == norm_first
    for mine, pytorch in zip(ours.layers, theirs.layers):
        copy_encoder_layer(mine, pytorch)
    if norm_first:
        ours.norm.load_state_dict(theirs.norm.state_dict())
    theirs.eval(), ours.eval()
    x = torch.randn(2, 6, d)
    pad = torch.tensor([[False] * 4 + [True] * 2, [False] * 6])
    torch.testing.assert_close(ours(x, key_padding_mask=pad), theirs(x, src_key_padding_mask=pad), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack_match_pytorch(ref, norm_first):
    d, h, ff, n = 12, 3, 24, 2
    layer = nn.TransformerDecoderLayer(d, h, ff, dropout=0.1, activation="relu", batch_first=True, norm_first=norm_first)
    theirs = nn.TransformerDecoder(layer, n, norm=nn.LayerNorm(d) if norm_first else None)
    randomize(theirs)
    ours = ref.decoder.Decoder(n, d, h, ff, dropout=0.1, norm_first=norm_first)
    for mine, pytorch in zip(ours.layers, theirs.layers):
        copy_decoder_layer(mine, pytorch)
    if norm_first:
        ours.norm.load_state_dict(theirs.norm.state_dict())
    theirs.eval(), ours.eval()
    x, memory = torch.randn(2, 5, d), torch.randn(2, 7, d)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
    tgt_pad = torch.tensor([[False] * 3 + [True] * 2, [False] * 5])
    mem_pad = torch.tensor([[False] * 7, [False] * 5 + [True] * 2])
    kwargs = dict(tgt_mask=causal, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)
    torch.testing.assert_close(ours(x, memory, **kwargs), theirs(x, memory, **kwargs), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(
        ours.layers[0](x, memory, **kwargs), theirs.layers[0](x, memory, **kwargs), atol=1e-5, rtol=1e-5
    )
    # No mask is applied that the caller does not pass.
    torch.testing.assert_close(ours(x, memory), theirs(x, memory), atol=1e-5, rtol=1e-5)


def test_encoder_decoder_attributes_dtype_and_errors(ref):
    layer = ref.decoder.DecoderLayer(8, 2, 16, dropout=0.2)
    for name in ("self_attn", "cross_attn", "feed_forward", "norm1", "norm2", "norm3", "dropout1", "dropout2", "dropout3"):
        assert hasattr(layer, name), name
    assert layer.self_attn.dropout == 0.2
    enc = ref.encoder.EncoderLayer(8, 2, 16, dropout=0.2).double().eval()
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    assert enc(x).dtype == torch.float64
    torch.testing.assert_close(enc(x), enc(x), atol=0, rtol=0)
    with pytest.raises(ValueError, match=r"d_model=8, num_heads=3"):
        ref.encoder.Encoder(2, 8, 3, 16)
    with pytest.raises(ValueError, match=r"d_model=8, num_heads=3"):
        ref.decoder.DecoderLayer(8, 3, 16)
    with pytest.raises(ValueError, match=r"num_layers.*-1"):
        ref.decoder.Decoder(-1, 8, 2, 16)


# ----------------------------------------------------------------------------- transformer


def small_transformer(ref, **kwargs):
    args = dict(d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=32, dropout=0.1, max_len=64)
    args.update(kwargs)
    return ref.transformer.Transformer(11, 13, **args)


def test_transformer_shapes_and_attributes(ref):
    model = small_transformer(ref).eval()
    src, tgt = torch.randint(1, 11, (3, 7)), torch.randint(1, 13, (3, 5))
    assert model(src, tgt).shape == (3, 5, 13)
    assert model.encode(src).shape == (3, 7, 16)
    assert model.decode(tgt, model.encode(src), src).shape == (3, 5, 16)
    assert isinstance(model.generator, nn.Linear) and model.generator.out_features == 13
    assert model.src_embed.embedding.num_embeddings == 11 and model.tgt_embed.embedding.num_embeddings == 13
    assert model.pos_encoding.pe.shape == (1, 64, 16)
    assert len(model.encoder.layers) == 2 and len(model.decoder.layers) == 2
    torch.testing.assert_close(model(src, tgt), model(src, tgt), atol=0, rtol=0)


def test_transformer_is_causal(ref):
    model = small_transformer(ref).eval()
    src = torch.randint(1, 11, (2, 6))
    tgt = torch.randint(1, 13, (2, 6))
    base = model(src, tgt)
    for t in range(5):
        changed = tgt.clone()
        changed[:, t + 1 :] = torch.randint(1, 13, (2, 5 - t))
        torch.testing.assert_close(model(src, changed)[:, : t + 1], base[:, : t + 1], atol=1e-5, rtol=1e-5)


def test_transformer_padding_invariance(ref):
    model = small_transformer(ref).eval()
    src = torch.tensor([[4, 7, 2, 9]])
    tgt = torch.tensor([[1, 5, 6]])
    base = model(src, tgt)
    padded_src = torch.tensor([[4, 7, 2, 9, 0, 0, 0]])
    torch.testing.assert_close(model(padded_src, tgt), base, atol=1e-5, rtol=1e-5)
    padded_tgt = torch.tensor([[1, 5, 6, 0, 0]])
    torch.testing.assert_close(model(src, padded_tgt)[:, :3], base, atol=1e-5, rtol=1e-5)
    # The same sequence in a padded batch gives the same logits.
    batch_src = torch.tensor([[4, 7, 2, 9, 0, 0], [3, 3, 8, 1, 5, 6]])
    batch_tgt = torch.tensor([[1, 5, 6], [1, 2, 3]])
    torch.testing.assert_close(model(batch_src, batch_tgt)[:1], base, atol=1e-5, rtol=1e-5)
    assert torch.isfinite(model(batch_src, torch.tensor([[1, 0, 0], [1, 2, 0]]))).all()


def test_transformer_errors(ref):
    with pytest.raises(ValueError, match=r"d_model=15"):
        small_transformer(ref, d_model=15, num_heads=3)
    with pytest.raises(ValueError, match=r"d_model=18, num_heads=4"):
        small_transformer(ref, d_model=18, num_heads=4)
    with pytest.raises(ValueError, match=r"max_len.*max_len=0"):
        small_transformer(ref).greedy_decode(torch.tensor([[3, 4]]), 1, 2, max_len=0)
    with pytest.raises(ValueError, match=r"S=65, max_len=64"):
        small_transformer(ref).encode(torch.ones(1, 65, dtype=torch.long))


class RiggedDecode:
    """Stands in for ``Transformer.decode``: position t of row b yields the one-hot of script[b][t]."""

    def __init__(self, scripts, vocab, bos):
        self.scripts, self.vocab, self.bos, self.calls = scripts, vocab, bos, []

    def __call__(self, tgt, memory, src):
        assert torch.all(tgt[:, 0] == self.bos)
        self.calls.append(tgt.clone())
        out = torch.zeros(tgt.shape[0], tgt.shape[1], self.vocab)
        for b, script in enumerate(self.scripts):
            for t in range(tgt.shape[1]):
                out[b, t, script[t]] = 1.0
        return out


def rigged_model(ref, scripts):
    vocab = 16
    model = ref.transformer.Transformer(8, vocab, d_model=vocab, num_heads=2, num_encoder_layers=1,
                                        num_decoder_layers=1, d_ff=8, pad_id=0)
    with torch.no_grad():
        model.generator.weight.copy_(torch.eye(vocab))
        model.generator.bias.zero_()
    model.decode = RiggedDecode(scripts, vocab, bos=1)
    return model


def test_greedy_decode_contract(ref):
    bos, eos, pad = 1, 2, 0
    scripts = [
        [3, 4, eos, 5, 5, 5, 5, 5, 5],  # stops at column 3, then pad
        [pad, 6, eos, 7, 7, 7, 7, 7, 7],  # a predicted pad is just a token
        [5, 5, 5, 5, 5, 5, 5, 5, 5],  # never stops: runs to max_len
    ]
    model = rigged_model(ref, scripts)
    model.eval()
    src = torch.randint(1, 8, (3, 4))
    out = model.greedy_decode(src, bos, eos, max_len=6)
    assert out.dtype == torch.long
    assert out.tolist() == [[1, 3, 4, 2, 0, 0], [1, 0, 6, 2, 0, 0], [1, 5, 5, 5, 5, 5]]
    assert [c.shape[1] for c in model.decode.calls] == [1, 2, 3, 4, 5]
    assert not model.training  # eval left as it is

    # Every row finished: stop early, even though max_len allows more.
    model = rigged_model(ref, [[3, 4, eos] + [5] * 6, [pad, 6, 7, eos] + [7] * 5])
    model.train()
    out = model.greedy_decode(src[:2], bos, eos, max_len=9)
    assert out.tolist() == [[1, 3, 4, 2, 0], [1, 0, 6, 7, 2]]
    assert model.training  # train left as it is

    assert model.greedy_decode(src[:2], bos, eos, max_len=1).tolist() == [[1], [1]]


def test_greedy_decode_matches_step_by_step_argmax(ref):
    model = small_transformer(ref, dropout=0.0).eval()
    src = torch.tensor([[3, 5, 7, 9], [2, 4, 6, 0]])
    bos, eos, max_len = 1, 2, 7
    out = model.greedy_decode(src, bos, eos, max_len)
    assert out.shape[0] == 2 and 1 <= out.shape[1] <= max_len
    for b in range(2):
        row_src = src[b : b + 1, : 4 if b == 0 else 3]  # the same sequence without padding
        ys = [bos]
        with torch.no_grad():
            while len(ys) < max_len:
                token = model(row_src, torch.tensor([ys]))[0, -1].argmax().item()
                ys.append(token)
                if token == eos:
                    break
        expected = ys + [model.pad_id] * (out.shape[1] - len(ys))
        assert out[b].tolist() == expected


# ----------------------------------------------------------------------------- rope


def test_rope_angles(ref):
    cos, sin = ref.rope.rope_angles(8, 20)
    assert cos.shape == sin.shape == (20, 4) and cos.dtype == torch.float32 and cos.device.type == "cpu"
    pos = torch.arange(20, dtype=torch.float64)[:, None]
    theta = pos * 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    torch.testing.assert_close(cos.double(), torch.cos(theta), atol=1e-6, rtol=0)
    torch.testing.assert_close(sin.double(), torch.sin(theta), atol=1e-6, rtol=0)
    cos2, _ = ref.rope.rope_angles(4, 3, base=100.0)
    assert cos2[2, 1].item() == pytest.approx(math.cos(2 * 100.0 ** -0.5), abs=1e-6)


def test_rope_matches_complex_formulation(ref):
    x = torch.randn(2, 3, 7, 8, dtype=torch.float64)
    out = ref.rope.apply_rope(x)
    assert out.dtype == torch.float64 and out.shape == x.shape
    theta = torch.arange(7, dtype=torch.float64)[:, None] * 10000.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    z = torch.view_as_complex(x.reshape(2, 3, 7, 4, 2).contiguous()) * torch.polar(torch.ones_like(theta), theta)
    torch.testing.assert_close(out, torch.view_as_real(z).reshape(2, 3, 7, 8), atol=1e-12, rtol=1e-12)
    # Position 0 is not rotated; the rotation is counter-clockwise: (1, 0) -> (cos, sin).
    torch.testing.assert_close(out[..., 0, :], x[..., 0, :])
    unit = torch.zeros(1, 1, 2, 2)
    unit[..., 0] = 1.0
    torch.testing.assert_close(ref.rope.apply_rope(unit)[0, 0, 1], torch.tensor([math.cos(1.0), math.sin(1.0)]))


def test_rope_preserves_norms_and_is_relative(ref):
    x = torch.randn(2, 2, 9, 16)
    torch.testing.assert_close(ref.rope.apply_rope(x).norm(dim=-1), x.norm(dim=-1), atol=1e-5, rtol=1e-5)
    q = torch.randn(1, 1, 1, 16, dtype=torch.float64)
    k = torch.randn(1, 1, 1, 16, dtype=torch.float64)

    def score(m, n):
        rq = ref.rope.apply_rope(q, positions=torch.tensor([m]))
        rk = ref.rope.apply_rope(k, positions=torch.tensor([n]))
        return (rq * rk).sum().item()

    for m, n in [(3, 1), (10, 4), (7, 7)]:
        for shift in (1, 5, 40):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-9)
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-6)
    explicit = ref.rope.apply_rope(x, positions=torch.arange(9))
    torch.testing.assert_close(explicit, ref.rope.apply_rope(x))


def test_rope_errors(ref):
    with pytest.raises(ValueError, match=r"head_dim.*head_dim=7"):
        ref.rope.rope_angles(7, 10)
    with pytest.raises(ValueError, match=r"head_dim.*head_dim=5"):
        ref.rope.apply_rope(torch.randn(1, 1, 3, 5))
    with pytest.raises(ValueError, match=r"positions.*\[3\].*\(4,\)"):
        ref.rope.apply_rope(torch.randn(1, 1, 3, 4), positions=torch.arange(4))


# ----------------------------------------------------------------------------- dtype and device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_outputs_follow_input_dtype_and_device(ref, device, dtype):
    x = torch.randn(2, 5, 8, dtype=dtype, device=device)
    pe = ref.positional_encoding.PositionalEncoding(8, max_len=10).to(device)
    assert pe(x).dtype == dtype and pe(x).device.type == device
    assert ref.masks.masked_softmax(x, x > 1).dtype == dtype
    out, w = ref.attention.scaled_dot_product_attention(x, x, x, torch.zeros(5, 5, dtype=torch.bool, device=device))
    assert out.dtype == w.dtype == dtype and out.device.type == device
    mha = ref.multi_head_attention.MultiHeadAttention(8, 2).to(device=device, dtype=dtype)
    out, w = mha(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool, device=device))
    assert out.dtype == w.dtype == dtype and out.device.type == device
    assert ref.rope.apply_rope(x.view(2, 1, 5, 8)).dtype == dtype
    model = small_transformer(ref).to(device=device, dtype=dtype).eval()
    src = torch.randint(1, 11, (2, 4), device=device)
    logits = model(src, torch.randint(1, 13, (2, 3), device=device))
    assert logits.dtype == dtype and logits.device.type == device
    assert model.greedy_decode(src, 1, 2, 4).device.type == device


# ----------------------------------------------------------------------------- autoencoder


def test_autoencoder_shapes_and_range(ref):
    model = ref.autoencoder.ConvAutoEncoder(latent_dim=12)
    x = torch.rand(5, 1, 28, 28)
    z = model.encode(x)
    assert z.shape == (5, 12)
    out = model.decode(z)
    assert out.shape == (5, 1, 28, 28)
    assert out.min() >= 0 and out.max() <= 1
    torch.testing.assert_close(model(x), out)
    assert ref.autoencoder.ConvAutoEncoder().encode(x).shape == (5, 32)
    with pytest.raises(ValueError, match=r"latent_dim.*0"):
        ref.autoencoder.ConvAutoEncoder(latent_dim=0)
    with pytest.raises(ValueError, match=r"x.*\(5, 1, 14, 14\)"):
        model.encode(torch.rand(5, 1, 14, 14))
    with pytest.raises(ValueError, match=r"z.*latent_dim=12.*\(5, 3\)"):
        model.decode(torch.rand(5, 3))


@pytest.mark.slow
def test_train_autoencoder_reduces_loss(ref):
    # 64 synthetic "digits": a bright square at a random place on a dark background.
    images = torch.zeros(64, 1, 28, 28)
    for i in range(64):
        r, c = torch.randint(0, 20, (2,)).tolist()
        images[i, 0, r : r + 8, c : c + 8] = 1.0
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, torch.zeros(64, dtype=torch.long)), batch_size=16, shuffle=True
    )
    model = ref.autoencoder.ConvAutoEncoder(latent_dim=8)
    with torch.no_grad():
        before = F.mse_loss(model(images), images).item()
    losses = ref.autoencoder.train_autoencoder(model, loader, epochs=3, lr=3e-3)
    assert isinstance(losses, list) and len(losses) == 3 and all(isinstance(v, float) for v in losses)
    assert losses[2] < losses[0]
    with torch.no_grad():
        after = F.mse_loss(model(images), images).item()
    assert after < 0.8 * before
    assert ref.autoencoder.train_autoencoder(model, loader, epochs=0) == []
    with pytest.raises(ValueError, match=r"epochs.*-1"):
        ref.autoencoder.train_autoencoder(model, loader, epochs=-1)
    with pytest.raises(ValueError, match=r"lr.*0"):
        ref.autoencoder.train_autoencoder(model, loader, lr=0)
