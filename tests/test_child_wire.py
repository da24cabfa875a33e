"""The wire between the parent and the child (:mod:`autograder.child.wire`): plain data and
tensors round-trip, anything else is refused, tensors are written as safetensors reads them."""

from __future__ import annotations

import math

import pytest
import torch

from autograder.child import wire


def test_wire_roundtrip_keeps_structure_and_tensors():
    value = {"a": (1, 2.5, math.inf), "b": [torch.arange(4).view(2, 2).t(), None, "s"], "c": torch.float64}
    enc = wire.Encoder()
    data = wire.pack({"v": enc.encode(value)}, enc.tensors)
    json_len, blob_len = wire.FRAME.unpack(data[:wire.FRAME.size])
    header, tensors = wire.unpack(data[wire.FRAME.size:wire.FRAME.size + json_len],
                                  data[wire.FRAME.size + json_len:])
    out = wire.decode(header["v"], tensors)
    assert out["a"] == (1, 2.5, math.inf)
    assert torch.equal(out["b"][0], torch.tensor([[0, 2], [1, 3]]))
    assert out["b"][1:] == [None, "s"] and out["c"] is torch.float64


@pytest.mark.parametrize("bad", [
    b'{"v": NaN}', b'[1, 2]', b'{"v": {"t": "pickle", "v": "x"}}', b'{"v": [1]}',
    b'{"v": {"t": "ref", "id": 1}}', b'{"v": {"t": "tensor", "k": "t9"}}',
])
def test_wire_refuses_anything_but_tagged_plain_data(bad):
    with pytest.raises(wire.WireError):
        header, tensors = wire.unpack(bad, b"")
        wire.decode(header["v"], tensors)


def test_wire_frame_limits():
    with pytest.raises(wire.WireError, match="exceeds"):
        wire.check_frame(wire.MAX_JSON_BYTES + 1, 0)


def test_a_dict_key_that_cannot_be_hashed_is_a_wire_error():
    # a tuple subclass holding a list: the child tags it as a tuple key, the parent cannot hash it
    body = b'{"v": {"t": "dict", "v": [[{"t": "tuple", "v": [{"t": "list", "v": [1]}]}, 1]]}}'
    header, tensors = wire.unpack(body, b"")
    with pytest.raises(wire.WireError, match="malformed value"):
        wire.decode(header["v"], tensors)
    for bad in ({"t": "float", "v": []}, {"t": "tensor", "k": ["t0"]}):
        with pytest.raises(wire.WireError):
            wire.decode(bad, {})


def test_tensors_are_written_as_safetensors_reads_them():
    """wire.save_tensors writes the safetensors format itself (faster on small tensors): every
    dtype and shape reads back equal through safetensors' own loader, which is what unpack uses."""
    from safetensors.torch import load

    shapes = [(), (0,), (3,), (2, 0, 4), (2, 5, 12)]
    dtypes = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool]
    tensors = {}
    for dtype in dtypes:
        for shape in shapes:
            values = torch.randn(shape, generator=torch.Generator().manual_seed(len(tensors))) * 100
            tensors[f"{dtype}{shape}"] = values > 0 if dtype is torch.bool else values.to(dtype)
    tensors["transposed"] = torch.arange(24.0).reshape(4, 6).t()
    got = load(wire.save_tensors(tensors))
    assert set(got) == set(tensors)
    for name, tensor in tensors.items():
        assert got[name].dtype == tensor.dtype and got[name].shape == tensor.shape, name
        assert torch.equal(got[name], tensor), name
    other = torch.tensor([1, 2, 3]).to(torch.uint16)   # a dtype of its own: safetensors' save writes it
    assert torch.equal(load(wire.save_tensors({"u": other}))["u"], other)
