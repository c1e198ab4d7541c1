"""The fast line decoder (msgspec) and the streamed scorer give exactly what the strict
decoder and ``score_records`` give: same values, same bad lines, same messages, same report."""

from __future__ import annotations

import itertools
import json
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatledger.corpus import ExtractionStream, read_chunks, read_extractions
from chatledger.corpus._lines import JsonTextError, fast_loads, loads_strict, read_json_lines
from chatledger.matching import _kernel
from chatledger.scoring import ScoringConfig, score_files, score_records

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"

TRICKY = [
    '{"a": 1e999}',
    '{"a": -1e999}',
    '{"a": 1e308}',
    '{"a": 1e-400}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": -Infinity}',
    '{"a": "\\ud800"}',
    '{"a": "\\udc80\\ud800"}',
    '{"a": "\\ud83d\\ude00"}',
    '{"\\ud800": 1}',
    '{"a": 1, "b": 2, "a": 3}',
    '{"a": 18446744073709551616}',
    '{"a": -9223372036854775809}',
    '{"a": ' + "7" * 4300 + "}",
    '{"a": ' + "7" * 4301 + "}",
    '{"a": ' + "1" * 400 + ".5}",
    '{"a": ' + "[" * 300 + "]" * 300 + "}",
    '{"a": ' + "[" * 2000 + "]" * 2000 + "}",
    '{"a": -0.0, "b": -0, "c": 1E2, "d": 0.1e1}',
    '{"a": "\\u0000\\u2028\\/"}',
    '{"a": "\t"}',
    '{"a": 1,}',
    '{"a": 1}{"b": 2}',
    "[1, 2]",
    '"text"',
    "null",
    "\ufeff{}",
    '{"a": tru}',
    '{"a": "\\x41"}',
]


def strict(text: str) -> object:
    try:
        return ("ok", loads_strict(text))
    except JsonTextError as exc:
        return ("error", exc.message)


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_the_fast_decoder_accepts_only_what_the_strict_one_does_and_agrees(text: str) -> None:
    fast = fast_loads(text.encode("utf-8", "surrogatepass"))
    kind, value = strict(text)  # type: ignore[misc]
    if fast is not None:
        assert kind == "ok"
        assert repr(fast) == repr(value)


def test_numbers_decode_to_the_same_floats() -> None:
    rng = random.Random(0)
    for _ in range(20_000):
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if x != x or abs(x) == float("inf"):
            continue
        for text in (repr(x), f"{x:.17e}", f"{rng.random():.{rng.randint(1, 30)}f}"):
            line = f'{{"v": {text}}}'
            assert repr(fast_loads(line.encode())) == repr(json.loads(line))


def test_lines_read_the_same_as_the_strict_decoder_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(TRICKY) + "\n", encoding="utf-8", errors="surrogatepass")
    for line in read_json_lines(path):
        kind, value = strict(line.text)  # type: ignore[misc]
        if line.ok:
            assert kind == "ok" and repr(line.value) == repr(value)
        elif line.value is None and not line.field:
            assert kind == "error" or not isinstance(value, dict)


def test_the_assignment_is_scipys_public_function_imported_on_first_use() -> None:
    # scipy's public linear_sum_assignment (no private extension loaded by file path), imported
    # the first time an assignment is solved: importing the kernel alone does not load
    # scipy.optimize (linprog, linalg, sparse …), so commands that never assign never pay it.
    code = (
        "import sys, numpy as np\n"
        "from chatledger.matching import _kernel\n"
        "assert 'scipy.optimize' not in sys.modules\n"
        "_kernel.assign(np.array([[100.0, 60.0], [70.0, 90.0]]), 60.0)\n"
        "from scipy.optimize import linear_sum_assignment\n"
        "assert _kernel._solver is linear_sum_assignment\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import numpy as np

    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 5), (7, 4), (12, 12)]:
        matrix = rng.random(shape) * 100
        rows, cols = _kernel.linear_sum_assignment(matrix, maximize=True)
        # Optimal: no other assignment of these rows beats it (brute force on the small ones).
        if max(shape) <= 7:
            best = _brute_force_best(matrix)
            assert matrix[rows, cols].sum() == pytest.approx(best, abs=1e-9)


def _brute_force_best(matrix: Any) -> float:
    m, n = matrix.shape
    if m > n:
        return _brute_force_best(matrix.T)
    return max(
        sum(matrix[i, c] for i, c in enumerate(cols))
        for cols in itertools.permutations(range(n), m)
    )


def _rows(n: int, order: list[int]) -> list[str]:
    lines = (EXAMPLES / "challenger.jsonl").read_text(encoding="utf-8").splitlines()
    return [lines[i % len(lines)] for i in order[:n]]


@pytest.mark.parametrize("shuffle", [False, True], ids=["in order", "shuffled"])
def test_streamed_score_is_score_records(tmp_path: Path, shuffle: bool) -> None:
    reference = (EXAMPLES / "reference.jsonl").read_text(encoding="utf-8").splitlines()
    challenger = (EXAMPLES / "challenger.jsonl").read_text(encoding="utf-8").splitlines()
    if shuffle:
        random.Random(3).shuffle(challenger)
        random.Random(4).shuffle(reference)
    challenger += [challenger[0], "not json", '{"chunk_id": "ghost", "extraction": {}}']
    ref_path, chal_path = tmp_path / "ref.jsonl", tmp_path / "chal.jsonl"
    ref_path.write_text("\n".join(reference) + "\n", encoding="utf-8")
    chal_path.write_text("\n".join(challenger) + "\n", encoding="utf-8")
    chunks = EXAMPLES / "chunks.jsonl"
    for with_chunks in (True, False):
        ref, chal = read_extractions(ref_path), read_extractions(chal_path)
        config = ScoringConfig.default()
        whole = score_records(
            ref.records,
            chal.records,
            read_chunks(chunks) if with_chunks else None,
            config,
            reference_model=ref.model,
            challenger_model=chal.model,
            problems=[*ref.problems, *chal.problems],
        )
        streamed = score_files(ref_path, chal_path, chunks if with_chunks else None, config)
        assert json.dumps(streamed.to_dict()) == json.dumps(whole.to_dict())
        assert streamed.chunks == [] and streamed.n_chunks == len(whole.chunks)


def test_a_stream_reads_out_of_order_records_back_from_their_offsets(tmp_path: Path) -> None:
    lines = (EXAMPLES / "challenger.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "chal.jsonl"
    path.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    whole = read_extractions(path)
    stream = ExtractionStream(path)
    stream.BUFFERED = 1  # type: ignore[misc]  # park all but one record as offsets
    for chunk_id in list(whole.records):
        taken = stream.take(chunk_id)
        assert taken == whole.records[chunk_id]
    assert stream.take("nowhere") is None
    stream.drain()
    assert stream.problems == whole.problems and stream.model == whole.model
