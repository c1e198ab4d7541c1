"""The code blocks of README.md and docs/*.md, and what runs them: one reader and one runner for
tests/test_readme.py and tests/test_docs_examples.py (issue 31).

A fenced block with a language is one :class:`Block`; a bare fence (```` ``` ```` alone) is text
and is skipped with its body, so a fence inside it does not open a block. The HTML comment on
the line before a block, if any, is its marker:

- ``<!-- file: NAME -->``: the block is written to NAME before the page's commands run;
- ``<!-- keyed: VARIABLE -->``: a bash or python block that calls a paid API — run with a made-up
  key in VARIABLE against the fake server on 127.0.0.1 (OpenAI's and Anthropic's wire formats);
- ``<!-- not run: why -->``: only for what is not a command (a format, a fragment of a config, a
  diagram, what a command prints). A bash or python block is always run.

What a bash block's lines do (:class:`BlockRunner`):

- ``export NAME=VALUE`` sets the environment of the lines after it;
- ``chatledger …`` runs the command (exit 0; ``--format json`` output must parse; no traceback).
  A command that serves until Ctrl-C (``chatledger annotate CHUNKS``, ``chatledger serve-local``,
  ``inspect view``) is started, its page fetched once it answers, then interrupted (exit 130 or
  0);
- ``make demo`` runs the line ``make -n demo`` prints (``chatledger demo`` in the venv running
  the tests: the shared demo output is copied in, made once per session); ``make test`` is checked
  with ``make -n`` only — a test cannot run the suite it is part of;
- ``pip install SPEC …`` is checked offline: every distribution and extra named is installed
  with every requirement satisfied (what the line would install is what the tests run with);
- ``pytest …`` and ``python FILE …`` run with this interpreter; a benchmark script named in
  :data:`SMALL` runs with the arguments given there appended (its sizes made small: the same
  code, seconds instead of minutes) and writes its results into the page's folder;
- ``inspect …`` runs inspect_ai's command line; ``dask scheduler``/``dask worker`` start in the
  background for the rest of the block (stopped at its end): another machine's address
  (10.0.0.1) is 127.0.0.1 and a shared folder (``/shared/…``) one in the page's folder.

Model servers: ``openai-compatible:http://127.0.0.1:PORT/v1:MODEL`` ids get the fake server on
that PORT for the block, and ``local:NAME`` models are served by a stand-in llama-server
(:mod:`fakes.fake_llama_server`) given through ``CHATLEDGER_LLAMA_SERVER``, with a stand-in model
file (its checked-hash stamp saying it is the catalogue's) in ``CHATLEDGER_MODELS_DIR``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from chatledger.corpus import read_extractions
from chatledger.demo import write_bundled_corpus
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(r"<!--\s*(file|not run|keyed):\s*(.+?)\s*-->")
_CHUNK_ID = re.compile(r"Chunk id: (\S+)")
_URL = re.compile(r"http://127\.0\.0\.1:\d+\S*")
_COMPATIBLE_PORT = re.compile(r"openai-compatible:http://127\.0\.0\.1:(\d+)/")
RUNNABLE = ("bash", "python")

# Benchmark scripts: the arguments appended when a page runs them (argparse: the last one wins).
SMALL: dict[str, list[str]] = {
    "benchmarks/bench_score.py": [
        *("--chunks", "12", "--repeats", "1", "--no-peer", "--sizes", "24"),
        *("--data", "{cwd}/bench-data"),
    ],
    "benchmarks/bench_rules.py": ["--repeats", "1", "--scale", "0.01"],
    "benchmarks/bench_structbench.py": ["--predictions", "200", "--repeats", "1"],
}


@dataclass(frozen=True)
class Block:
    source: str  # README.md, docs/gate.md
    lang: str
    text: str
    line: int
    marker: tuple[str, str] | None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    @property
    def kind(self) -> str | None:
        return self.marker[0] if self.marker else None


def read_blocks(path: Path) -> list[Block]:
    """The fenced blocks with a language of ``path``, in order."""
    source = path.resolve().relative_to(ROOT).as_posix()
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```") and len(line) > 3:
            start = index
            body: list[str] = []
            index += 1
            while not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            previous = lines[start - 1].strip() if start else ""
            found = _MARKER.fullmatch(previous)
            marker = (found.group(1), found.group(2)) if found else None
            text = "\n".join(body) + "\n"
            blocks.append(Block(source, line[3:].strip(), text, start + 1, marker))
        elif line.startswith("```"):
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                index += 1
        index += 1
    return blocks


def unrunnable(block: Block) -> str | None:
    """Why ``block`` breaks the rules above, or None."""
    if block.kind == "keyed" and block.lang not in RUNNABLE:
        return f"{block.where}: only bash/python blocks are keyed"
    if block.kind == "not run" and block.lang in RUNNABLE:
        return f"{block.where}: a {block.lang} block is run, never marked 'not run'"
    if block.kind is None and block.lang not in (*RUNNABLE, "sql"):
        return (
            f"{block.where}: a {block.lang} block that is neither run nor a file: mark it "
            "<!-- file: NAME --> or <!-- not run: why -->"
        )
    return None


def shell_commands(text: str) -> Iterator[list[str]]:
    """The commands of a bash block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    for raw in joined.splitlines():
        words = shlex.split(raw, comments=True)
        if words:
            yield words


def bundled_gold(folder: Path) -> dict[str, dict[str, Any]]:
    """The bundled gold by chunk id (written into ``folder``): what the fake server answers an
    extraction with."""
    gold_path = write_bundled_corpus(folder)[1]
    return {
        cid: record.extraction.model_dump(mode="json")
        for cid, record in read_extractions(gold_path).records.items()
        if record.extraction is not None
    }


def fake_openai(gold: dict[str, dict[str, Any]]) -> Any:
    """OpenAI's chat completions answered: extractions with the bundled gold of the asked
    chunk, judge requests with a verdict, anything else ``{}``."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "judge_verdict":
            verdict = {"content_accuracy": 80, "completeness": 70, "hallucination": 90, "items": []}
            return openai_body(json.dumps(verdict), model=body["model"])
        if schema == "chatledger_extraction_v3":
            prompt = "\n".join(str(m.get("content")) for m in body["messages"])
            chunk_id = _CHUNK_ID.findall(prompt)[-1]
            return openai_body(json.dumps(gold[chunk_id]), model=body["model"])
        return openai_body("{}", model=body["model"])

    return reply


def demo_command(prefix: Path) -> list[str]:
    """The command ``make demo`` runs with the venv at ``prefix`` (read from ``make -n``)."""
    done = subprocess.run(
        ["make", "-n", "-s", "--no-print-directory", "-C", str(ROOT), "demo", f"VENV={prefix}"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines and lines[-1].endswith("chatledger demo"), done.stdout
    assert not any("pip install" in line for line in lines), (
        f"the venv {prefix} is not installed as make installs it: run make .venv/.installed"
    )
    return shlex.split(lines[-1])


def make_demo(out: Path) -> Path:
    """``make demo``'s output, written into ``out/runs/demo``."""
    command = demo_command(Path(sys.prefix))
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / "runs" / "demo"


def pip_line_installed(words: list[str]) -> None:
    """``pip install SPEC …`` would install nothing new: each named distribution and the
    requirements of its extras are installed (offline; a path means this checkout)."""
    specs = [w for w in words[2:] if not w.startswith("-")]
    assert specs, words
    for spec in specs:
        name, extras = spec, ""
        if "[" in spec:
            name, extras = spec[: spec.index("[")], spec[spec.index("[") + 1 : -1]
        if name in (".", "") or "/" in name:
            local = ROOT / name if name not in (".", "") else ROOT
            name = "chatledger" if local == ROOT else _local_name(local)
        meta = importlib.metadata.metadata(name)
        wanted = {e.strip() for e in extras.split(",") if e.strip()}
        declared = set(meta.get_all("Provides-Extra") or [])
        assert wanted <= declared, f"{spec}: no extra {sorted(wanted - declared)} in {name}"
        _requirements_met(name, wanted, spec)


def _local_name(folder: Path) -> str:
    text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^name\s*=\s*"([^"]+)"', text, re.MULTILINE)
    assert found, folder
    return found.group(1)


def _requirements_met(name: str, extras: set[str], spec: str, seen: set[str] | None = None) -> None:
    seen = set() if seen is None else seen
    for text in importlib.metadata.requires(name) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is not None and not any(
            marker.evaluate({"extra": extra}) for extra in (extras or {""})
        ):
            continue
        key = f"{requirement.name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        version = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{spec}: {requirement} is not met ({requirement.name} {version})"
        )
        if requirement.extras:
            _requirements_met(requirement.name, set(requirement.extras), spec, seen)


FAKE_LLAMA = Path(__file__).resolve().parent / "fakes" / "fake_llama_server.py"


def stand_in_local_models(folder: Path, *, before: str = "") -> dict[str, str]:
    """The environment in which ``local:`` models are served by the stand-in llama-server
    (:mod:`fakes.fake_llama_server`): a file for each catalogue model in ``folder``, its hash
    stamp saying it was checked (so the catalogue's SHA-256 is taken as its own), and the
    stand-in as ``CHATLEDGER_LLAMA_SERVER`` (``before``: shell lines run before it starts)."""
    from chatledger.providers import CATALOGUE

    folder.mkdir(parents=True, exist_ok=True)
    for entry in CATALOGUE.values():
        model = folder / entry.file_name
        model.write_bytes(b"GGUF stand-in")
        stat = model.stat()
        stamp = f"{entry.sha256} {stat.st_size} {int(stat.st_mtime)}\n"
        model.with_name(model.name + ".sha256").write_text(stamp, encoding="utf-8")
    binary = folder / "llama-server"
    script = f'#!/bin/sh\n{before}exec "{sys.executable}" "{FAKE_LLAMA}" "$@"\n'
    binary.write_text(script, encoding="utf-8")
    binary.chmod(0o755)
    return {"CHATLEDGER_LLAMA_SERVER": str(binary), "CHATLEDGER_MODELS_DIR": str(folder)}


def _free_port(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(200 <= reply.status < 500)
    except OSError:
        return False


@dataclass
class BlockRunner:
    """Runs the bash and python blocks of one page, in ``cwd``, with ``env``."""

    cwd: Path
    gold: dict[str, dict[str, Any]]
    demo: Path | None = None  # make demo's output, made once per session
    ran: list[str] = field(default_factory=list)
    background: list[subprocess.Popen[str]] = field(default_factory=list)

    def run_block(self, block: Block, env: dict[str, str]) -> None:
        servers: list[FakeLLMServer] = []
        try:
            for port in sorted({int(p) for p in _COMPATIBLE_PORT.findall(block.text)}):
                assert _free_port(port), f"{block.where}: port {port} is taken"
                server = FakeLLMServer(port=port)
                server.always(OPENAI_PATH, Reply(body=fake_openai(self.gold)))
                servers.append(server.__enter__())
            if block.lang == "python":
                self._python_script(block, env)
            else:
                for words in shell_commands(block.text):
                    self.run_command(block, words, env)
        finally:
            self._stop_background()
            for server in servers:
                server.__exit__(None, None, None)

    def _python_script(self, block: Block, env: dict[str, str]) -> None:
        done = subprocess.run(
            [sys.executable, "-c", block.text],
            cwd=self.cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{block.where}:\n{done.stderr[-3000:]}"
        self.ran.append(f"python ({block.where})")

    def run_command(self, block: Block, words: list[str], env: dict[str, str]) -> None:
        head = words[0]
        shown = " ".join(words)
        started = time.perf_counter()
        if head == "export":
            name, _, value = words[1].partition("=")
            env[name] = "sk-docs-test" if value in ("…", "") else value
            return
        if head == "make":
            self._make(block, words[1:])
        elif head == "pip":
            self._pip(words, env)
        elif head == "chatledger" and _serves(words):
            self._serve(block, [sys.executable, "-m", "chatledger", *words[1:]], env, shown)
        elif head == "chatledger":
            argv = [sys.executable, "-m", "chatledger", *map(self._here, words[1:])]
            self._check(block, words, argv, env)
        elif head == "inspect" and words[1:2] == ["view"]:
            self._serve(block, [_script("inspect"), *words[1:]], env, shown)
        elif head == "inspect":
            self._check(block, words, [_script("inspect"), *words[1:]], env)
        elif head == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words[1:]]
            self._check(block, words, argv, env)
        elif head == "python":
            script = words[1]
            small = [word.format(cwd=self.cwd) for word in SMALL.get(script, [])]
            argv = [sys.executable, str(ROOT / script), *words[2:], *small]
            if script in SMALL:
                argv += ["--out", str(self.cwd / (Path(script).stem + ".json"))]
            self._check(block, words, argv, env)
        elif head == "dask":
            self._dask(block, words, env)
        else:
            raise AssertionError(f"{block.where}: cannot run {words!r}")
        self.ran.append(shown)
        print(f"{time.perf_counter() - started:6.1f}s {shown[:100]}")

    def _pip(self, words: list[str], env: dict[str, str]) -> None:
        """A folder of this checkout whose distribution is not installed is installed the way
        pip leaves it (its .dist-info with its entry points, beside it on the path of the
        commands after it: tests/test_plugins.py does the same); anything else must be
        installed already (:func:`pip_line_installed`)."""
        for spec in [w for w in words[2:] if not w.startswith("-")]:
            folder = ROOT / spec
            if "/" in spec and folder.is_dir() and (folder / "pyproject.toml").is_file():
                project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
                site = self.cwd / ".site"
                _dist_info(site, project["project"])
                env["PYTHONPATH"] = os.pathsep.join(
                    [str(site), str(folder), env.get("PYTHONPATH", "")]
                )
            else:
                pip_line_installed(["pip", "install", spec])

    def _check(self, block: Block, words: list[str], argv: list[str], env: dict[str, str]) -> None:
        done = subprocess.run(
            argv, cwd=self.cwd, env=env, capture_output=True, text=True, timeout=600
        )
        shown = " ".join(words)
        assert done.returncode == 0, (
            f"{block.where}: {shown}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, f"{block.where}: {shown}\n{done.stderr}"
        if "--format" in words and words[words.index("--format") + 1] == "json":
            json.loads(done.stdout)

    def _make(self, block: Block, targets: list[str]) -> None:
        for target in targets:
            if target == "demo":
                assert self.demo is not None, f"{block.where}: make demo without the demo fixture"
                demo_command(Path(sys.prefix))  # what make would run is what was run
                shutil.copytree(self.demo, self.cwd / "runs" / "demo", dirs_exist_ok=True)
            else:
                done = subprocess.run(
                    ["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True
                )
                assert done.returncode == 0, f"{block.where}: make {target}\n{done.stderr}"

    def _serve(self, block: Block, argv: list[str], env: dict[str, str], shown: str) -> None:
        log = self.cwd / f".serve-{len(self.ran)}.log"
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env={**env, "BROWSER": "true"},  # a page "opened" by a command that does nothing
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + 120
            page = None
            while page is None and time.monotonic() < deadline:
                assert process.poll() is None, (
                    f"{block.where}: {shown} ended\n{log.read_text(encoding='utf-8')[-3000:]}"
                )
                found = _URL.search(log.read_text(encoding="utf-8"))
                if found and _answers(found.group(0)):
                    page = found.group(0)
                time.sleep(0.2)
            assert page is not None, f"{block.where}: {shown} never served a page"
            with urllib.request.urlopen(page, timeout=10) as reply:
                assert reply.status == 200, (shown, reply.status)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                raise
        text = log.read_text(encoding="utf-8")
        # inspect_ai's command line (click) says "Aborted!" and exits 1 on Ctrl-C.
        allowed = (0, 130, 1) if argv[0].endswith("inspect") else (0, 130)
        assert code in allowed, f"{block.where}: {shown} exited {code} on Ctrl-C\n{text[-3000:]}"
        assert "Traceback" not in text, f"{block.where}: {shown}\n{text[-3000:]}"

    def _dask(self, block: Block, words: list[str], env: dict[str, str]) -> None:
        argv = [_script("dask"), *map(self._here, words[1:])]
        log = self.cwd / f".dask-{len(self.background)}.log"
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.background.append(process)
        ready = "Scheduler at" if words[1] == "scheduler" else "Starting established connection"
        deadline = time.monotonic() + 120
        while ready not in log.read_text(encoding="utf-8"):
            assert process.poll() is None and time.monotonic() < deadline, (
                f"{block.where}: {' '.join(words)}\n{log.read_text(encoding='utf-8')[-3000:]}"
            )
            time.sleep(0.2)

    def _here(self, word: str) -> str:
        """Other machines are this one: their address 127.0.0.1, a shared folder one here."""
        word = word.replace("10.0.0.1", "127.0.0.1")
        return str(self.cwd) + word if word.startswith("/shared/") else word

    def _stop_background(self) -> None:
        for process in reversed(self.background):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self.background.clear()


def _dist_info(site: Path, project: dict[str, Any]) -> None:
    """What pip leaves in site-packages for ``project`` (a pyproject's table): its .dist-info."""
    name, version = project["name"], project["version"]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _serves(words: list[str]) -> bool:
    """A chatledger command that serves until Ctrl-C."""
    if words[1:2] == ["serve-local"]:
        return "--list" not in words
    return words[1:2] == ["annotate"] and words[2:3] != ["agreement"]


def _script(name: str) -> str:
    found = Path(sys.executable).parent / name
    assert found.is_file(), f"{name} is not installed beside {sys.executable}"
    return str(found)
