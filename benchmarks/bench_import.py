"""Importing a WhatsApp export of 10,000 / 100,000 / 1,000,000 messages: messages/s and peak
memory; a streaming import's peak memory does not grow with the export (ratio ≈ 1).

Each size's export is generated once into a temporary folder (an Android group chat, 24 h
``dd/mm/yyyy, HH:MM - Name: text``): six speakers (one a phone number, one with an umlaut),
texts from the bundled corpus (colons, URLs, emoji among them), a tenth of the messages on two
to four lines, media placeholders, edit marks, deleted messages and system lines (encryption
notice, members added and leaving, subject changes with a colon in the quoted subject) between
them, bursts of messages minutes apart and silences of 7–14 hours (so chunks close at gaps as
well as at 40 messages). The size counts the messages kept; deleted and system lines come on
top. Every import runs ``chatledger corpus import whatsapp FILE --out DIR --format json`` in a
fresh process (the CLI's own entry point, in process, so the child can time it and read its own
peak RSS with ``resource.getrusage``); rounds interleave the sizes and the median of
``--repeats`` is reported. Series: ``import`` (defaults) and ``pseudonymise``
(``--pseudonymise``: two passes over the export, names, numbers, e-mails and URLs replaced).

For each series it prints seconds, messages/s, peak RSS, the peak above the process's RSS
before the import (the import's own memory), and the ratio of the largest size's peak to the
smallest's. Run:
    python benchmarks/bench_import.py [--repeats 3] [--sizes 10000 100000 1000000]
        [--series import pseudonymise]
Writes benchmarks/results/bench_import.json.

``--baseline DIR`` runs every import a second time, interleaved, with chatledger from another
source tree (``DIR/src``: the commit before a change, unpacked with ``git archive``), and prints
each series' time and peak-RSS ratio against it at every size — a before/after in one run, on
one machine under one load. ``--mb N`` sizes the export by megabytes instead (the message count
that makes about N MB). For issue 30 (imports that never guess; pseudonymisation that holds):
    git archive fde7adc src | tar -x -C /tmp/base
    python benchmarks/bench_import.py --mb 50 --baseline /tmp/base --repeats 3 \
        --out benchmarks/results/bench_import_issue30.json

``--cli-help`` measures instead how fast the command line starts: ``chatledger --help`` and
``chatledger score --help`` (and, for scale, ``python -c pass``), each in a fresh process,
``--repeats`` rounds interleaved, medians of wall and CPU seconds (the child's own rusage);
``--source DIR`` runs chatledger from another source tree (an older commit, for a before and
after in one session). It updates the ``cli_help`` entry of the results file only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

SIZES = [10_000, 100_000, 1_000_000]
SERIES = {"import": (), "pseudonymise": ("--pseudonymise",)}
CORPUS = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "corpus" / "parts"
SPEAKERS = (
    "Ness Alderton", "Theo Pike", "Sam Ruiz", "Mei Chen", "+44 7700 900123", "Zoë Brandt",
)  # fmt: skip
EXTRA = (
    "Plan: meet at 7:30, then the market 🛒",
    "See https://example.org/trip?day=2 for the route",
    "Call me on +44 7700 900456 if the train is late",
    "ok 👍",
    "Mail it to ness@example.org: subject 'tickets'",
)
START = datetime(2019, 4, 1, 8, 0)


def corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(CORPUS.glob("*_chunks.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.extend(m["text"].replace("\n", " ") for m in json.loads(line)["messages"])
    return texts + list(EXTRA)


def generate(path: Path, size: int, seed: int = 12) -> dict[str, int]:
    """Write a ``size``-message Android export to ``path``; what it holds, by line type."""
    rng = random.Random(seed)
    texts = corpus_texts()
    moment = START
    burst = rng.randint(20, 80)
    counts = {"messages": 0, "lines": 0, "multi_line": 0, "media": 0, "edited": 0,
              "deleted": 0, "system": 0}  # fmt: skip

    def stamp() -> str:
        return moment.strftime("%d/%m/%Y, %H:%M - ")

    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(stamp() + "Messages and calls are end-to-end encrypted. No one outside of "
                  "this chat, not even WhatsApp, can read or listen to them. Tap to learn "
                  "more.\n")  # fmt: skip
        counts["system"] += 1
        counts["lines"] += 1
        while counts["messages"] < size:
            burst -= 1
            if burst == 0:
                moment += timedelta(hours=rng.uniform(7, 14))
                burst = rng.randint(20, 80)
            else:
                moment += timedelta(seconds=rng.randint(0, 240))
            speaker = SPEAKERS[rng.randrange(len(SPEAKERS))]
            roll = rng.random()
            if roll < 0.0005:
                other = SPEAKERS[rng.randrange(len(SPEAKERS))]
                event = rng.choice(
                    (f"{speaker} added {other}", f"{other} left",
                     f'{speaker} changed the subject from "Trip" to "Trip: day {counts["lines"]}"')
                )  # fmt: skip
                out.write(stamp() + event + "\n")
                counts["system"] += 1
                counts["lines"] += 1
                continue
            if roll < 0.0105:
                out.write(stamp() + f"{speaker}: This message was deleted\n")
                counts["deleted"] += 1
                counts["lines"] += 1
                continue
            if roll < 0.0505:
                body = "<Media omitted>"
                counts["media"] += 1
            else:
                body = texts[rng.randrange(len(texts))]
                if roll > 0.90:
                    extra = rng.randint(1, 3)
                    body += "".join("\n" + texts[rng.randrange(len(texts))] for _ in range(extra))
                    counts["multi_line"] += 1
                    counts["lines"] += extra
                elif roll > 0.88:
                    body += " <This message was edited>"
                    counts["edited"] += 1
            out.write(stamp() + f"{speaker}: {body}\n")
            counts["messages"] += 1
            counts["lines"] += 1
    return counts


def child(export: Path, out_dir: Path, series: str) -> None:
    """One import in this process: seconds, peak RSS (before and after), the CLI's summary."""
    import contextlib
    import io
    import resource
    import time

    import chatledger.cli

    before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.argv = ["chatledger", "corpus", "import", "whatsapp", str(export), "--out",
                str(out_dir), "--format", "json", *SERIES[series]]  # fmt: skip
    printed = io.StringIO()
    started = time.perf_counter()
    code: object = 0
    with contextlib.redirect_stdout(printed):
        try:
            chatledger.cli.main()
        except SystemExit as exc:
            code = exc.code
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if code not in (0, None):
        raise SystemExit(f"import failed with exit code {code}")
    summary = json.loads(printed.getvalue())
    print(json.dumps({
        "chatledger": str(Path(chatledger.cli.__file__).parents[2]),
        "seconds": seconds, "peak_mb": peak_mb, "before_mb": before_mb,
        "messages": summary["messages"], "chunks": summary["chunks"],
        "skipped": summary["skipped"],
    }))  # fmt: skip


def once(export: Path, work: Path, series: str, source: Path | None = None) -> dict[str, Any]:
    out_dir = work / f"out-{series}"
    argv = [sys.executable, __file__, "--child", str(export), str(out_dir), series]
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source / "src")
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}): {done.stderr[-2000:]}")
    shutil.rmtree(out_dir, ignore_errors=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


HELP_COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "chatledger --help": ["-m", "chatledger", "--help"],
    "chatledger score --help": ["-m", "chatledger", "score", "--help"],
}


def timed_process(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one process, its CPU read from its own rusage (wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    error = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {error.decode()[-1000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def cli_help(repeats: int, source: Path | None, out: Path) -> None:
    env = dict(os.environ, COLUMNS="100")
    if source is not None:
        env["PYTHONPATH"] = str(source)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in HELP_COMMANDS}
    for _ in range(repeats):
        for name, args in HELP_COMMANDS.items():
            runs[name].append(timed_process([sys.executable, *args], env))
    entry: dict[str, Any] = {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "source": str(source) if source else "installed",
        "repeats": repeats,
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
        "target_wall_s": 0.3,
        "commands": {},
    }
    for name, pairs in runs.items():
        wall = statistics.median(w for w, _ in pairs)
        cpu = statistics.median(c for _, c in pairs)
        entry["commands"][name] = {
            "wall_median_s": wall,
            "cpu_median_s": cpu,
            "all_wall_s": [w for w, _ in pairs],
            "all_cpu_s": [c for _, c in pairs],
        }
        print(f"{name:<26} {wall:6.3f} s wall  {cpu:6.3f} s CPU  (median of {repeats})")
    payload: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    key = "cli_help" if source is None else "cli_help_source"
    payload[key] = entry
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--series", choices=sorted(SERIES), nargs="+", default=list(SERIES))
    parser.add_argument("--child", nargs=3, metavar=("EXPORT", "OUT", "SERIES"),
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cli-help", action="store_true", help="time --help instead")
    parser.add_argument("--source", type=Path, help="with --cli-help: chatledger from DIR")
    parser.add_argument("--baseline", type=Path, help="also import with chatledger from DIR/src")
    parser.add_argument("--mb", type=float, help="one export of about this many megabytes")
    args = parser.parse_args()
    if args.cli_help:
        out = args.out or Path(__file__).parent / "results" / "bench_import.json"
        cli_help(args.repeats, args.source, out)
        return
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), args.child[2])
        return
    sizes = sorted(args.sizes)
    payload: dict[str, Any] = {
        "repeats": args.repeats, "exports": {}, "series": {},
        "baseline": str(args.baseline) if args.baseline else None,
        "load_average_1_5_15min_at_start": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip
    sources: dict[str, Path | None] = {"": None}
    if args.baseline is not None:
        sources["@baseline"] = args.baseline.resolve()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as folder:
        work = Path(folder)
        if args.mb is not None:
            sample = work / "sample.txt"
            generate(sample, 10_000)
            per_message = sample.stat().st_size / 10_000
            sizes = [round(args.mb * 1e6 / per_message / 1000) * 1000]
        exports: dict[int, Path] = {}
        for size in sizes:
            exports[size] = work / f"WhatsApp Chat with Bench {size}.txt"
            counts = generate(exports[size], size)
            counts["bytes"] = exports[size].stat().st_size
            payload["exports"][str(size)] = counts
            print(f"generated {size:>9,} messages: {counts['lines']:,} lines, "
                  f"{counts['bytes'] / 1e6:.1f} MB", flush=True)  # fmt: skip
        for series in args.series:
            runs: dict[tuple[str, int], list[dict[str, Any]]] = {
                (tag, size): [] for tag in sources for size in sizes
            }
            for _ in range(args.repeats):
                for size in sizes:
                    for tag, source in sources.items():
                        result = once(exports[size], work, series, source)
                        if result["messages"] != size:
                            raise SystemExit(
                                f"{size}: the import read {result['messages']} messages"
                            )
                        runs[(tag, size)].append(result)
            for tag in sources:
                payload["series"][series + tag] = _series(series + tag, sizes, runs, tag)
            if args.baseline is not None:
                ratios = {}
                for size in sizes:
                    now, then = (payload["series"][series + t]["rows"] for t in sources)
                    row_now = next(r for r in now if r["size"] == size)
                    row_then = next(r for r in then if r["size"] == size)
                    ratios[str(size)] = {
                        "seconds_ratio": row_now["seconds"] / row_then["seconds"],
                        "peak_mb_ratio": row_now["peak_mb"] / row_then["peak_mb"],
                    }
                    print(f"{series:>12} {size:>9,}  now / baseline: "
                          f"{ratios[str(size)]['seconds_ratio']:.2f}× the time, "
                          f"{ratios[str(size)]['peak_mb_ratio']:.2f}× the peak RSS",
                          flush=True)  # fmt: skip
                payload["series"][series]["against_baseline"] = ratios
    payload["load_average_1_5_15min_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out = args.out or Path(__file__).parent / "results" / "bench_import.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")


def _series(
    name: str, sizes: list[int], runs: dict[tuple[str, int], list[dict[str, Any]]], tag: str
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for size in sizes:
        done = runs[(tag, size)]
        seconds = statistics.median(r["seconds"] for r in done)
        peak = statistics.median(r["peak_mb"] for r in done)
        before = statistics.median(r["before_mb"] for r in done)
        row = {
            "size": size, "seconds": seconds, "all_seconds": [r["seconds"] for r in done],
            "messages_per_s": size / seconds, "peak_mb": peak,
            "all_peak_mb": [r["peak_mb"] for r in done],
            "before_mb": before, "import_mb": peak - before,
            "chunks": done[0]["chunks"], "skipped": done[0]["skipped"],
            "chatledger": done[0]["chatledger"],
        }  # fmt: skip
        rows.append(row)
        print(f"{name:>21} {size:>9,}  {seconds:8.2f} s  "
              f"{row['messages_per_s']:>9,.0f} msg/s  peak {peak:6.1f} MB "
              f"(+{row['import_mb']:.1f} MB over {before:.1f})", flush=True)  # fmt: skip
    ratio = rows[-1]["peak_mb"] / rows[0]["peak_mb"]
    ratio_import = rows[-1]["import_mb"] / max(rows[0]["import_mb"], 0.1)
    if len(rows) > 1:
        print(f"{name:>21} peak RSS, largest / smallest: {ratio:.2f} "
              f"(the import's own: {ratio_import:.2f})", flush=True)  # fmt: skip
    return {
        "rows": rows, "peak_ratio_largest_smallest": ratio,
        "import_mb_ratio_largest_smallest": ratio_import,
    }  # fmt: skip


if __name__ == "__main__":
    main()
