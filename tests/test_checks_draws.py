"""The secret draws of the training checks (:mod:`autograder.checks.draws`): the run seed mixed
with the instructor's grading secret, the secret file, the family of pixel transforms."""

import pytest
import torch

from autograder.checks import draws


def test_draws_mix_the_run_seed_with_the_secret(monkeypatch):
    monkeypatch.setenv(draws.ENV_VAR, "secret-a")
    a = [draws.draw_seed(3, "p"), draws.draw_seed(3, "p"), draws.draw_seed(4, "p"), draws.draw_seed(3, "q")]
    perm_a = draws.symbol_permutation(3, 3, 10)
    monkeypatch.setenv(draws.ENV_VAR, "secret-b")
    b = draws.draw_seed(3, "p")
    assert a[0] == a[1] and len({a[0], a[2], a[3], b}) == 4
    assert sorted(perm_a.tolist()) == list(range(10)) and perm_a[:3].tolist() == [0, 1, 2]
    transforms = {draws.draw_transform(seed) for seed in range(60)}
    assert transforms <= set(range(1, 16)) and len(transforms) >= 12  # never the identity


def test_the_secret_file_is_made_once_and_kept_private(tmp_path, monkeypatch):
    kit = tmp_path / "kit"
    (kit / "solutions").mkdir(parents=True)
    monkeypatch.setenv("TKIT_ROOT", str(kit))
    monkeypatch.delenv(draws.ENV_VAR, raising=False)
    first = draws.grading_secret()
    path = kit / "solutions" / draws.SECRET_FILE
    assert len(first) == 64 and path.stat().st_mode & 0o077 == 0
    assert draws.grading_secret() == first
    monkeypatch.setenv("TKIT_ROOT", str(tmp_path / "student-edition"))
    assert draws.grading_secret() == draws.PUBLIC_SECRET


def test_the_transform_family_is_sixteen_distinct_pixel_maps():
    image = torch.rand(1, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    outs = [draws.transform_images(image, i) for i in range(draws.N_TRANSFORMS)]
    assert len({o.flatten().tolist().__repr__() for o in outs}) == 16
    assert torch.equal(outs[0], image) and len(set(draws.TRANSFORMS)) == 16
    for out in outs:  # a pixel permutation, possibly inverted: the same statistics
        values = out.flatten().sort().values
        assert torch.allclose(values, image.flatten().sort().values) or \
            torch.allclose(values, (1 - image).flatten().sort().values)
    with pytest.raises(ValueError, match="0..15"):
        draws.transform_images(image, 16)
