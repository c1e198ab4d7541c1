"""A plain ``pip install .`` gives a working CLI: every import at run time is a declared
dependency (a module-level import: a core dependency; an import inside a function: at least an
optional extra), checked statically, and a fresh virtual environment without extras runs
``chatledger --help``, ``demo``, ``score``, ``run`` and ``gate``, while each command whose extra
is missing says in one line which extra to install. The lock file ``make`` installs from holds
every direct dependency at the floor pyproject.toml declares."""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from chatledger.core import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "chatledger"
# Modules that another program loads through its entry point, inside that program: the import
# of the program itself is then always satisfied, by whatever version the user runs.
HOSTED = {"src/chatledger/pytest_plugin.py": "pytest"}


def _requirement_name(spec: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
    assert match is not None, spec
    return match.group(0).lower().replace("_", "-")


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_requirement_name(s) for s in project["dependencies"]}
    extras = {
        _requirement_name(s) for specs in project["optional-dependencies"].values() for s in specs
    }
    return core, extras


@functools.cache
def _imports() -> dict[str, set[tuple[str, bool]]]:
    """Top-level third-party module → {(file:line, imported at module level)}. Parsed once
    (every source file: several seconds), read by four checks."""
    found: dict[str, set[tuple[str, bool]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module_level = {id(node) for node in tree.body}
        # Imports under ``if TYPE_CHECKING:`` never run.
        type_only: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                type_only.update(id(child) for child in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "chatledger" or top in sys.stdlib_module_names:
                    continue
                if HOSTED.get(str(path.relative_to(ROOT))) == top:
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(top, set()).add((where, id(node) in module_level))
    return found


def test_every_runtime_import_is_a_declared_dependency() -> None:
    core, extras = _declared()
    distributions = metadata.packages_distributions()
    problems = []
    for module, places in sorted(_imports().items()):
        owners = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        eager = sorted(where for where, at_top in places if at_top)
        if eager and not owners & core:
            problems.append(
                f"{module} ({', '.join(owners)}) imported at {eager[0]} is not a core dependency"
            )
        elif not owners & (core | extras):
            first = sorted(where for where, _ in places)[0]
            problems.append(f"{module} imported at {first} is not declared at all")
    assert problems == []
    # The check sees the imports it must: the CLI framework and an optional SDK.
    assert "typer" in _imports() and "openai" in _imports()
    # The pytest plugin is registered for pytest, the one program that loads it.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"chatledger": "chatledger.pytest_plugin"}


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return project["project"]  # type: ignore[no-any-return]


def _requirements(extra: str | None) -> list[Requirement]:
    """The requirements of ``extra`` (None: the core ones), an extra naming others expanded."""
    project = _project()
    specs = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    found: list[Requirement] = []
    for spec in specs:
        requirement = Requirement(spec)
        if requirement.name == "chatledger":
            for inner in sorted(requirement.extras):
                found += _requirements(inner)
        else:
            found.append(requirement)
    return found


def _locked() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "requirements-lock.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if match:
            pins[_requirement_name(match.group(1))] = Version(match.group(2))
    return pins


def test_dependencies_are_ranges_and_the_lock_holds_each_floor() -> None:
    # Every runtime dependency is a range with a floor (`>=`), never a pin, so ChatLedger can
    # share an environment; the lock (resolved lowest-direct) holds exactly that floor, so the
    # floor is what `make test` runs. A stale lock (a dependency added or its floor moved
    # without `make lock`) fails here, naming the requirement.
    locked = _locked()
    problems = []
    for extra in (None, "all", "test"):
        for requirement in _requirements(extra):
            name = _requirement_name(requirement.name)
            floors = [s.version for s in requirement.specifier if s.operator == ">="]
            if extra is None and any(s.operator == "==" for s in requirement.specifier):
                problems.append(f"{requirement} is pinned")
            if len(floors) != 1:
                problems.append(f"{requirement} has no single >= floor")
            elif locked.get(name) != Version(floors[0]):
                problems.append(f"{requirement}: the lock has {locked.get(name)} (run make lock)")
    assert problems == []
    # `make` installs the lock, then the project without resolving anything else.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "pip install --quiet -r $(LOCK)" in makefile
    assert "LOCK := requirements-lock.txt" in makefile
    assert "pip install --quiet --no-deps -e ." in makefile


def test_the_extras_table_matches_pyproject() -> None:
    # core.EXTRAS (what a command checks before it starts) names each extra's own modules.
    distributions = metadata.packages_distributions()
    extras = _project()["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        # dask[distributed]: the extra of a requirement is a distribution of its own.
        declared = {_requirement_name(n) for r in _requirements(extra) for n in {r.name, *r.extras}}
        for module in modules:
            owners = {_requirement_name(d) for d in distributions.get(module, [module])}
            assert owners & declared, (extra, module, owners, declared)
    # `all` is every extra but the CPU torch of embeddings (and the tools of test and bench).
    assert set(extras) - {"all", "test", "bench"} == set(EXTRAS)
    all_of = Requirement(extras["all"][0])
    assert all_of.name == "chatledger" and all_of.extras == set(EXTRAS) - {"embeddings"}
    # The single-command packages are no longer core dependencies.
    core = {_requirement_name(r.name) for r in _requirements(None)}
    assert not core & {"starlette", "uvicorn", "scikit-learn", "optuna", "phonenumbers"}


def test_click_is_not_imported_directly() -> None:
    # Typer 0.29 vendors its own copy of click; a direct import of click needs a package that
    # a plain install does not bring (the reason this file exists).
    assert "click" not in _imports()


def _one_line_naming(extra: str, done: subprocess.CompletedProcess[str]) -> None:
    """``done`` stopped as a user mistake (exit 2) with one line naming the install."""
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pip install 'chatledger[{extra}]'" in lines[0], lines


def test_a_plain_install_without_extras_runs_help_and_the_demo(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # --no-compile: pip would byte-compile every module of numpy, scipy, pandas … (a third of
    # the install's CPU); what the commands below import is compiled when they import it.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-compile", str(ROOT)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    cli = env_dir / "bin" / "chatledger"
    helped = subprocess.run(
        [str(cli), "--help"], capture_output=True, text=True, env=environment, timeout=60
    )
    assert helped.returncode == 0, helped.stderr
    assert "score" in helped.stdout and "Traceback" not in helped.stderr
    out = tmp_path / "demo"
    demo = subprocess.run(
        [str(cli), "demo", "--out", str(out), "--format", "json"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert (out / "run" / "report.html").stat().st_size > 100_000
    # The demo leaves out the schema selections, saying which extra would run them.
    assert "pip install 'chatledger[select]'" in json.loads(demo.stdout)["selection_skipped"]
    # The SDKs and the single-command packages are extras: the plain install has none of
    # them, and nothing above or below needed them.
    for module in ("openai", "anthropic", "starlette", "uvicorn", "sklearn", "optuna",
                   "phonenumbers"):  # fmt: skip
        missing = subprocess.run(
            [str(python), "-c", f"import {module}"], capture_output=True, env=environment
        )
        assert missing.returncode != 0, module
    # score and run work on the demo's files (run: its config with one challenger, every
    # layer, into a new folder — the demo above ran all seven through the same code).
    config = json.loads((out / "demo.yaml").read_text(encoding="utf-8"))
    config["challengers"] = config["challengers"][:1]
    (out / "one.yaml").write_text(json.dumps(config), encoding="utf-8")
    assert config["layers"] == ["extraction", "judge", "downstream"]
    scored = subprocess.run(
        [str(cli), "score", "--reference", "corpus/gold.jsonl", "--challenger",
         "challengers/offline-rules.jsonl", "--chunks", "corpus/chunks.jsonl", "--format",
         "json"],
        capture_output=True, text=True, env=environment, cwd=out, timeout=120,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr[-2000:]
    assert 0.0 < json.loads(scored.stdout)["extraction_composite"] < 1.0
    ran = subprocess.run(
        [str(cli), "run", "one.yaml", "--out", str(tmp_path / "again"), "--format", "json"],
        capture_output=True, text=True, env=environment, cwd=out, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (tmp_path / "again" / "run.json").is_file()
    # Each command whose extra is missing stops before any work, in one line naming it.
    annotated = subprocess.run(
        [str(cli), "annotate", "corpus/chunks.jsonl", "--out", str(tmp_path / "gold.jsonl"),
         "--no-browser"],
        capture_output=True, text=True, env=environment, cwd=out, timeout=60,
    )  # fmt: skip
    _one_line_naming("annotate", annotated)
    assert not (tmp_path / "gold.jsonl").exists()
    pseudonymised = subprocess.run(
        [str(cli), "corpus", "import", "csv", str(ROOT / "tests/data/exports/csv/family.csv"),
         "--out", str(tmp_path / "imported"), "--pseudonymise"],
        capture_output=True, text=True, env=environment, timeout=60,
    )  # fmt: skip
    _one_line_naming("pseudonymise", pseudonymised)
    assert not (tmp_path / "imported").exists()
    imported = subprocess.run(
        [str(cli), "corpus", "import", "csv", str(ROOT / "tests/data/exports/csv/family.csv"),
         "--out", str(tmp_path / "imported")],
        capture_output=True, text=True, env=environment, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr[-2000:]
    # The annotation page's files are in the package; the gate and the API work from it; the
    # inspect export says which extra it needs, in one line.
    packaged = subprocess.run(
        [
            str(python),
            "-c",
            "from chatledger.annotate import page_html; import chatledger as cl; "
            "assert 'ChatLedger annotation' in page_html('n') and callable(cl.gate) "
            "and callable(cl.score)",
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert packaged.returncode == 0, packaged.stderr[-2000:]
    gated = subprocess.run(
        [str(cli), "gate", str(out / "run"), str(out / "run"), "--baseline-model",
         "simulated:light", "--candidate-model", "simulated:light", "--rules",
         "{overall: {max_drop: 0}}"],
        capture_output=True, text=True, env=environment, timeout=120,
    )  # fmt: skip
    assert gated.returncode == 0, gated.stderr[-2000:]
    exported = subprocess.run(
        [str(cli), "export", "inspect", str(out / "run")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    _one_line_naming("inspect", exported)
