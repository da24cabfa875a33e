"""Known mistakes of exercise 2, ``positional_encoding.py`` (see :mod:`autograder.mistakes.catalog`)."""

from autograder.mistakes.catalog import Degenerate, Mutant

_SIN = "table[:, 0::2] = torch.sin(angle)"
_COS = "table[:, 1::2] = torch.cos(angle)"
_BUFFER = 'self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0), persistent=True)'
_ADD = "x + self.pe[:, :seq_len].to(dtype=x.dtype, device=x.device)"

MUTANTS = [
    Mutant(
        id="pe_sin_cos_swapped",
        exercise="positional_encoding",
        hint_en="sin and cos are swapped: yours puts the cosine in the even columns; the rule is sin in the even columns 2i, cos in the odd columns 2i+1",
        hint_ko="sin 과 cos 가 바뀌었습니다. 제출한 코드는 짝수 열에 cos 를 넣었습니다. 규칙은 짝수 열(2i)에 sin, 홀수 열(2i+1)에 cos 입니다",
        replace=((_SIN, "table[:, 0::2] = torch.cos(angle)"), (_COS, "table[:, 1::2] = torch.sin(angle)")),
    ),
    Mutant(
        id="pe_halves_concatenated",
        exercise="positional_encoding",
        convention=True,
        hint_en="you put all sines in the first half and all cosines in the second (a real convention, e.g. "
                "tensor2tensor); this exercise follows the paper: sin and cos interleaved in columns 2i, 2i+1",
        hint_ko="sin 을 앞 절반, cos 를 뒤 절반에 모았습니다 (tensor2tensor 등에서 쓰는 실제 방식). 이 과제는 "
                "논문처럼 2i 열에 sin, 2i+1 열에 cos 를 번갈아 넣습니다",
        replace=((_SIN, "table[:, : d_model // 2] = torch.sin(angle)"),
                 (_COS, "table[:, d_model // 2 :] = torch.cos(angle)")),
    ),
    Mutant(
        id="pe_exponent_i_over_d",
        exercise="positional_encoding",
        hint_en="the exponent is i/d_model instead of 2i/d_model: the frequencies fall off half as fast",
        hint_ko="지수를 2i/d_model 이 아니라 i/d_model 로 썼습니다 (주파수가 절반 속도로 줄어듭니다)",
        replace=(("two_i = torch.arange(0, d_model, 2, dtype=torch.float64)",
                  "two_i = torch.arange(0, d_model // 2, dtype=torch.float64)"),),
    ),
    Mutant(
        id="pe_not_buffer",
        exercise="positional_encoding",
        hint_en="pe is a plain attribute, not a registered buffer: it is missing from state_dict() and does not "
                "follow .to(); use self.register_buffer('pe', ...)",
        hint_ko="pe 를 일반 속성으로 저장해 state_dict() 에 없고 .to() 를 따라가지 않습니다. "
                "self.register_buffer('pe', ...) 를 쓰세요",
        replace=((_BUFFER, "self.pe = sinusoidal_table(max_len, d_model).unsqueeze(0)"),),
    ),
    Mutant(
        id="pe_non_persistent_buffer",
        exercise="positional_encoding",
        hint_en="pe is registered with persistent=False, so it is missing from state_dict(); the exercise asks "
                "for a persistent buffer",
        hint_ko="pe 를 persistent=False 로 등록해 state_dict() 에 없습니다. persistent buffer 여야 합니다",
        replace=(("unsqueeze(0), persistent=True)", "unsqueeze(0), persistent=False)"),),
    ),
    Mutant(
        id="pe_trainable_parameter",
        exercise="positional_encoding",
        hint_en="pe is an nn.Parameter, so the optimiser would train it; the sinusoidal table is fixed: "
                "register it as a buffer",
        hint_ko="pe 를 nn.Parameter 로 만들어 학습되어 버립니다. 고정된 표이므로 buffer 로 등록하세요",
        replace=((_BUFFER, "self.pe = nn.Parameter(sinusoidal_table(max_len, d_model).unsqueeze(0))"),),
    ),
    Mutant(
        id="pe_sliced_on_batch_axis",
        exercise="positional_encoding",
        hint_en="the table is sliced by the batch size (x.size(0)) instead of the sequence length: with "
                "batch-first inputs [B, S, D] slice pe[:, :S]",
        hint_ko="표를 시퀀스 길이가 아니라 배치 크기(x.size(0))로 잘랐습니다. 배치 우선 입력 [B, S, D] 에서는 "
                "pe[:, :S] 로 잘라야 합니다",
        replace=((_ADD, "x + self.pe[0, : x.shape[0]].unsqueeze(1).to(dtype=x.dtype, device=x.device)"),),
    ),
]

# Mistakes reported in public code; each entry names its source.
MUTANTS += [
    # Source: OpenNMT/OpenNMT-py#1845 (the TensorFlow tutorial's get_angles uses 2 * (i // 2); written
    # as i, every column gets its own exponent and each sin/cos pair is split across two frequencies).
    Mutant(
        id="pe_exponent_per_column",
        exercise="positional_encoding",
        hint_en="every column j has its own exponent j/d_model, so the cosine of pair i uses (2i+1)/d_model: "
                "both columns 2i and 2i+1 must use the same frequency 1/10000^(2i/d_model)",
        hint_ko="열 j 마다 지수 j/d_model 을 따로 써서 쌍 i 의 cos 이 (2i+1)/d_model 을 씁니다. 2i 열과 2i+1 열은 "
                "같은 주파수 1/10000^(2i/d_model) 을 써야 합니다",
        replace=((_COS, "table[:, 1::2] = torch.cos(position / torch.pow(10000.0, (two_i + 1) / d_model))"),),
    ),
    # Source: Kyubyong/transformer#81 ("the result of dividing the integer is 0": the exponent 2i/d_model
    # computed in integer arithmetic is 0 for every column, so every frequency is 1).
    Mutant(
        id="pe_integer_exponent",
        exercise="positional_encoding",
        hint_en="the exponent 2i/d_model is computed in integer arithmetic (floor division), so it is 0 for "
                "every column and every frequency is 1: divide as floats",
        hint_ko="지수 2i/d_model 을 정수 나눗셈으로 계산해 모든 열에서 0 이 되어 주파수가 모두 1 입니다. "
                "실수 나눗셈을 쓰세요",
        replace=(("angle = position / torch.pow(10000.0, two_i / d_model)",
                  "angle = position / torch.pow(10000.0, two_i // d_model)"),),
    ),
    # Source: warner-benjamin/commented-transformers#1 (div_term divided by the context size instead of
    # the hidden size).
    Mutant(
        id="pe_exponent_over_max_len",
        exercise="positional_encoding",
        hint_en="the exponent divides by max_len instead of d_model: 10000^(2i/d_model)",
        hint_ko="지수를 d_model 이 아니라 max_len 으로 나누었습니다: 10000^(2i/d_model)",
        replace=(("angle = position / torch.pow(10000.0, two_i / d_model)",
                  "angle = position / torch.pow(10000.0, two_i / max_len)"),),
    ),
    # Source: graykode/nlp-tutorial#73 (positions counted from 1 instead of 0).
    Mutant(
        id="pe_positions_from_one",
        exercise="positional_encoding",
        hint_en="positions are counted from 1; the first row of the table is position 0 (sin 0 = 0, cos 0 = 1)",
        hint_ko="위치를 1 부터 셌습니다. 표의 첫 행은 위치 0 입니다 (sin 0 = 0, cos 0 = 1)",
        replace=(("position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)",
                  "position = torch.arange(1, max_len + 1, dtype=torch.float64).unsqueeze(1)"),),
    ),
]


# -- what the degenerate templates wrap (autograder.mistakes.adversaries) ------------------------------
SIGNATURES = ("sinusoidal_table", "PositionalEncoding.forward")

# -- degenerate implementations: code of the contract's shape that does nothing useful, graded by
# tkit validate beside the generated ones (autograder.mistakes.degenerate) -------------------------
DEGENERATES = (
    Degenerate("pe_adds_nothing", "positional_encoding", "a table of zeros: forward returns x", """
def sinusoidal_table(max_len, d_model):
    if d_model < 2 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got max_len={max_len}")
    return torch.zeros(max_len, d_model)
"""),
    Degenerate("pe_one_frequency", "positional_encoding", "every column pair at the first frequency", """
_reference_table = sinusoidal_table
def sinusoidal_table(max_len, d_model):
    return _reference_table(max_len, d_model)[:, :2].repeat(1, d_model // 2)
"""),
)
