"""Training-based grading: the AutoEncoder on MNIST and the Transformer on a reversal task.

Parent-side, trusted code shared by ``suites/{public,hidden}/test_autoencoder.py`` and
``suites/hidden/test_transformer__training.py``. The child trains (kit tasks
``fit_autoencoder`` / ``fit_transformer`` of :mod:`autograder.child.tasks`); everything that
decides a grade is measured here, from plain tensors:

* **AutoEncoder.** The child builds the student's ``ConvAutoEncoder(LATENT_DIM)`` and runs the
  student's ``train_autoencoder`` on ``AE.n_train`` MNIST digits (a fixed, seeded sample; see
  :func:`autograder.mnist.grading_split`). Only then does the parent send the held-out digits to
  ``encode``; it checks ``z`` is ``[n_heldout, LATENT_DIM]``, rounds it to bfloat16 (so no extra
  bits ride in the float32 mantissas), and sends it to ``decode`` of a *new* model loaded with
  the weights taken right after training, in a *fresh child process*: nothing but ``z`` and the
  trained weights can reach ``decode``, so an identity/skip path, a wider ``z`` or a cache of
  the inputs cannot score. The parent computes the held-out mean squared error itself.
* **Transformer.** The child trains the student's ``Transformer`` with the kit's own loop on
  sequences the parent generates (reverse a random token sequence, padded); the parent
  generates different held-out sequences and scores exact-match accuracy of ``greedy_decode``.

Thresholds (measured with the reference, see ``benchmarks/bench_training.py``):

=============================  ===========  =============  ===============  ==================
check                          reference    full credit    partial credit   zero
=============================  ===========  =============  ===============  ==================
AE held-out MSE (lower=better)  0.0185      <= 0.030       0.030 .. 0.055   > 0.055
Transformer exact match         0.748       >= 0.55        0.20 .. 0.55     < 0.20
=============================  ===========  =============  ===============  ==================

Margins: the AutoEncoder's full-credit mark is the reference's error plus 60 % (room for a
different architecture or the allowed BCE loss); "learns something" (0.055) is below what the
best constant image (the training mean, ~0.067) achieves, while an untrained model scores ~0.23.
The Transformer's full-credit mark is 0.2 below the reference; a model without the causal mask
(it copies the next target token during training) or an untrained one scores ~0. Partial credit
is linear between the two marks. Runs are cached per submission, so the public and hidden tests
share one training run.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from dataclasses import dataclass, field

import torch

try:  # instructor-only: the student edition ships no mistake catalog
    from autograder import catalog
except ImportError:
    catalog = None
from autograder.i18n import _
from autograder.variants import LocalImpl


@dataclass(frozen=True)
class AutoencoderBudget:
    """The fixed AutoEncoder training budget (the same for every submission and run)."""

    latent_dim: int = 16
    n_train: int = 4000
    n_heldout: int = 1000
    epochs: int = 3
    lr: float = 5e-3
    batch_size: int = 32
    seed: int = 5
    timeout_s: float = 120.0        # wall-clock limit of the student's training call
    full_credit_mse: float = 0.030
    learns_mse: float = 0.055


@dataclass(frozen=True)
class TransformerBudget:
    """The fixed Transformer training budget and task (reverse a sequence)."""

    vocab: int = 10                # 0 = pad, 1 = BOS, 2 = EOS, 3.. = symbols
    min_len: int = 2
    max_len: int = 6
    d_model: int = 32
    num_heads: int = 4
    layers: int = 2
    d_ff: int = 64
    steps: int = 400
    batch_size: int = 64
    lr: float = 2e-3
    seed: int = 7
    data_seed: int = 11
    heldout_seed: int = 13
    n_heldout: int = 500
    timeout_s: float = 180.0
    full_credit_acc: float = 0.55
    partial_acc: float = 0.20

    def config(self) -> dict:
        """Keyword arguments of ``Transformer(...)``."""
        return dict(src_vocab_size=self.vocab, tgt_vocab_size=self.vocab, d_model=self.d_model,
                    num_heads=self.num_heads, num_encoder_layers=self.layers,
                    num_decoder_layers=self.layers, d_ff=self.d_ff, dropout=0.0,
                    max_len=4 * self.max_len, pad_id=PAD)


PAD, BOS, EOS = 0, 1, 2
N_EXAMPLES = 2                  # digits pictured in the report (the plugin caps a figure at 4096 numbers)
AE = AutoencoderBudget()
TF = TransformerBudget()


def linear_credit(value: float, zero_at: float, full_at: float) -> float:
    """The fraction of credit for ``value``: 0 at ``zero_at``, 1 at ``full_at``, linear between,
    clipped to [0, 1] (works whether higher or lower is better); NaN gives 0."""
    if math.isnan(value):
        return 0.0
    frac = (value - zero_at) / (full_at - zero_at)
    return min(1.0, max(0.0, frac))


def named_mistake(mutant_id: str) -> catalog.Mutant | None:
    """The catalog entry ``mutant_id``, or None (student edition, or not in the catalog)."""
    if catalog is None:
        return None
    try:
        return catalog.by_id(mutant_id)
    except (KeyError, catalog.CatalogError):
        return None


@contextlib.contextmanager
def fresh_process(impl):
    """A new child for the same submission (trusted local implementations are reused as is)."""
    from autograder.remote import RemoteImpl

    if not isinstance(impl, RemoteImpl):
        yield impl
        return
    other = RemoteImpl(impl.submission, impl.limits, label=impl.label)
    other.deadline = impl.deadline
    try:
        yield other
    finally:
        other.close()


_CACHE: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def _cached(impl, key: str, compute):
    """``compute()`` once per implementation and key; a raised AssertionError is cached too."""
    slot = _CACHE.setdefault(impl, {})
    if key not in slot:
        try:
            slot[key] = ("ok", compute())
        except AssertionError as exc:
            slot[key] = ("error", exc)
    kind, value = slot[key]
    if kind == "error":
        raise value
    return value


# -- AutoEncoder -----------------------------------------------------------------------------------


@dataclass
class AutoencoderRun:
    """What the parent measured from one training run.

    ``losses``: what train_autoencoder returned (unchecked plain data); ``weights_changed``:
    whether any parameter differs after training; ``mse``: held-out mean squared error between
    the digits and ``decode(z)`` (float, parent-computed); ``problem``: why no MSE could be
    measured (a student-facing sentence), else None; ``examples``: the ``ae_reconstructions``
    figure of :mod:`autograder.pictures` (``N_EXAMPLES`` held-out digits and their
    reconstructions, ``[k, 28, 28]`` nested lists).
    """

    losses: object
    weights_changed: bool
    mse: float = math.nan
    problem: str | None = None
    examples: dict = field(default_factory=dict)


def autoencoder_run(impl, budget: AutoencoderBudget = AE, data_dir=None, cache: bool = True) -> AutoencoderRun:
    """Train ``impl``'s AutoEncoder once (cached per implementation unless ``cache=False``) and
    measure it. Raises SubmissionError (an AssertionError) when the student's code fails, and
    :class:`autograder.mnist.DatasetError` when MNIST is missing or corrupted."""
    if not cache:
        return _autoencoder_run(impl, budget, data_dir)
    return _cached(impl, f"autoencoder:{budget}:{data_dir}", lambda: _autoencoder_run(impl, budget, data_dir))


def _autoencoder_run(impl, budget: AutoencoderBudget, data_dir) -> AutoencoderRun:
    from autograder import mnist

    split = mnist.grading_split(budget.n_train, budget.n_heldout, seed=budget.seed, data_dir=data_dir)
    out = impl.task("fit_autoencoder", impl.autoencoder, budget.latent_dim, split.train_images,
                    split.train_labels, budget.epochs, budget.lr, budget.batch_size, budget.seed,
                    timeout=budget.timeout_s)
    if not isinstance(out, dict) or set(out) != {"model", "losses", "initial", "trained"}:
        raise AssertionError(_("the training run returned an unexpected value"))
    initial, trained = out["initial"], out["trained"]
    changed = any(not torch.equal(initial[k], trained[k]) for k in initial
                  if k in trained and initial[k].is_floating_point())
    run = AutoencoderRun(losses=out["losses"], weights_changed=changed)
    z = out["model"].encode(split.heldout_images)
    want = [budget.n_heldout, budget.latent_dim]
    if not isinstance(z, torch.Tensor) or list(z.shape) != want or not z.is_floating_point():
        got = list(z.shape) if isinstance(z, torch.Tensor) else type(z).__name__
        run.problem = _("encode(x) of {n} held-out digits should give a float tensor of shape {want} "
                        "(latent_dim={d}), got {got}").format(n=budget.n_heldout, want=want,
                                                              d=budget.latent_dim, got=got)
        return run
    z = z.float().to(torch.bfloat16).float()
    with fresh_process(impl) as other:
        model = other.autoencoder.ConvAutoEncoder(budget.latent_dim)
        model.load_state_dict(trained)
        model.eval()
        recon = model.decode(z)
    images = split.heldout_images
    if not isinstance(recon, torch.Tensor) or tuple(recon.shape) != tuple(images.shape):
        got = list(recon.shape) if isinstance(recon, torch.Tensor) else type(recon).__name__
        run.problem = _("decode(z) should give shape {want}, got {got}").format(want=list(images.shape), got=got)
        return run
    recon = recon.detach().double()
    if not torch.isfinite(recon).all():
        run.problem = _("decode(z) returned NaN or inf for held-out digits")
        return run
    run.mse = float(((recon - images.double()) ** 2).mean())
    run.examples = {"originals": images[:N_EXAMPLES, 0].tolist(),
                    "reconstructions": recon[:N_EXAMPLES, 0].tolist()}
    return run


# -- Transformer -----------------------------------------------------------------------------------


def reversal_data(n: int, seed: int, budget: TransformerBudget = TF) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` reversal examples from ``seed``: ``(src Long[n, max_len], tgt Long[n, max_len + 2])``.

    ``src`` holds ``L`` random symbols (ids ``3..vocab-1``, ``min_len <= L <= max_len``) then
    ``PAD``; ``tgt`` is ``BOS``, the ``L`` symbols reversed, ``EOS``, then ``PAD``.
    """
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(budget.min_len, budget.max_len + 1, (n,), generator=g)
    symbols = torch.randint(3, budget.vocab, (n, budget.max_len), generator=g)
    pos = torch.arange(budget.max_len)
    valid = pos < lengths[:, None]
    src = torch.where(valid, symbols, PAD)
    # reversed symbols: position i of the target holds source position L-1-i
    rev_index = (lengths[:, None] - 1 - pos).clamp(min=0)
    reversed_ = torch.where(valid, torch.gather(symbols, 1, rev_index), PAD)
    tgt = torch.full((n, budget.max_len + 2), PAD)
    tgt[:, 0] = BOS
    tgt[:, 1:budget.max_len + 1] = reversed_
    tgt[torch.arange(n), lengths + 1] = EOS
    return src, tgt


def exact_match(generated: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Bool ``[n]``: each generated row equals its target up to and including EOS.

    ``generated`` Long ``[n, L]`` from greedy_decode (BOS first); rows shorter than the target
    (no room for EOS) do not match.
    """
    n, width = tgt.shape
    if generated.shape[1] < width:
        generated = torch.cat([generated, torch.full((n, width - generated.shape[1]), -1,
                                                     dtype=generated.dtype)], dim=1)
    generated = generated[:, :width]
    needed = tgt != PAD          # BOS, the symbols and EOS
    return ((generated == tgt) | ~needed).all(dim=1)


@dataclass
class TransformerRun:
    """``losses`` (the kit loop's per-step losses), ``accuracy`` (held-out exact match: the lower
    of the submission's own ``greedy_decode`` and the reference model carrying the submission's
    trained weights) and ``note`` (why the second was lower, when it was)."""

    losses: list
    accuracy: float
    note: str = ""


def transformer_run(impl, budget: TransformerBudget = TF, cache: bool = True) -> TransformerRun:
    """Train ``impl``'s Transformer with the kit's loop once (cached per implementation unless
    ``cache=False``) and score greedy decoding. Raises SubmissionError when the student's code fails."""
    if not cache:
        return _transformer_run(impl, budget)
    return _cached(impl, f"transformer:{budget}", lambda: _transformer_run(impl, budget))


def _transformer_run(impl, budget: TransformerBudget) -> TransformerRun:
    src, tgt = reversal_data(budget.steps * budget.batch_size, budget.data_seed, budget)
    out = impl.task("fit_transformer", impl.transformer, budget.config(), src, tgt, budget.steps,
                    budget.batch_size, budget.lr, budget.seed, PAD, timeout=budget.timeout_s)
    if not isinstance(out, dict) or set(out) != {"model", "losses"}:
        raise AssertionError(_("the training run returned an unexpected value"))
    held_src, held_tgt = reversal_data(budget.n_heldout, budget.heldout_seed, budget)
    generated = out["model"].greedy_decode(held_src, BOS, EOS, budget.max_len + 2)
    if not isinstance(generated, torch.Tensor) or generated.dim() != 2 or \
            generated.shape[0] != budget.n_heldout or generated.is_floating_point():
        got = list(generated.shape) if isinstance(generated, torch.Tensor) else type(generated).__name__
        raise AssertionError(_("greedy_decode(src, ...) should return a LongTensor [{n}, L], got {got}").format(
            n=budget.n_heldout, got=got))
    accuracy = float(exact_match(generated.long(), held_tgt).double().mean())
    note = ""
    if not isinstance(impl, LocalImpl):  # a submission: its weights must do the work, not its code
        weights_accuracy, note = _accuracy_of_weights(out["model"], budget, held_src, held_tgt)
        if weights_accuracy < accuracy:
            accuracy = weights_accuracy
            note = note or _("the reference Transformer carrying your trained weights reverses only "
                             "{acc:.0%} of the held-out sequences: the accuracy must come from the trained "
                             "weights").format(acc=weights_accuracy)
    return TransformerRun(losses=list(out["losses"]), accuracy=accuracy, note=note)


def _reference_with_named_mistakes(reference):
    """The reference, with the mistakes this run has already named in the Transformer's
    components applied (a Pre-LN encoder where Post-LN was asked, say): the student's weights are
    then judged in the architecture the student really built, so a component mistake, already
    graded in its own exercise, does not cost the training points again."""
    from autograder import exercises, testing

    if catalog is None:
        return reference
    named = [catalog.by_id(mutant_id) for name in exercises.get("transformer").depends
             for mutant_id in sorted(testing.CURRENT.named.get(name, ()))]
    if not named:
        return reference
    try:
        return catalog.combined_impl(named)
    except catalog.CatalogError:
        return reference


def _accuracy_of_weights(model, budget: TransformerBudget, held_src, held_tgt) -> tuple[float, str]:
    """Held-out exact match of the *reference* ``Transformer`` (with the component mistakes
    already named in this run, see :func:`_reference_with_named_mistakes`) loaded with the
    submission's trained ``state_dict`` (the contract fixes every parameter's name), decoded by
    the reference's ``greedy_decode``: code that computes the answer without learning it (the
    reversal task is easy to hard-code) scores nothing here. Extra keys are allowed; a missing or
    misshapen parameter gives 0 with a note naming it."""
    from autograder import variants

    try:
        reference = variants.reference()
    except FileNotFoundError:  # a student edition: its suites cannot use the reference anyway
        return 1.0, ""
    reference = _reference_with_named_mistakes(reference)
    state = model.state_dict()
    probe = reference.transformer.Transformer(**budget.config())
    expected = probe.state_dict()
    if not isinstance(state, dict):
        return 0.0, _("state_dict() of the trained model did not return a dict")
    wrong = [k for k, v in expected.items()
             if not isinstance(state.get(k), torch.Tensor) or tuple(state[k].shape) != tuple(v.shape)]
    if wrong:
        return 0.0, _("the trained weights do not have the contract's parameter names and shapes "
                      "(missing or different: {keys})").format(keys=", ".join(wrong[:4]))
    probe.load_state_dict({k: state[k].to(v.dtype) for k, v in expected.items()})
    probe.eval()
    generated = probe.greedy_decode(held_src, BOS, EOS, budget.max_len + 2)
    return float(exact_match(generated.long(), held_tgt).double().mean()), ""


def mse_message(mse: float, bar: float, budget: AutoencoderBudget = AE) -> str:
    """A student-facing sentence: the held-out MSE measured and the bar it should meet."""
    return _("held-out reconstruction error (MSE of decode(encode(x))) {mse:.4f} after {epochs} epochs on "
             "{n} digits; it should be at most {bar}").format(mse=mse, epochs=budget.epochs,
                                                              n=budget.n_train, bar=bar)
