"""A plain ``pip install .`` gives a working CLI: every import at run time is a declared
dependency (a module-level import: a core dependency; an import inside a function: at least an
optional extra), checked statically, and a fresh virtual environment without extras runs
``chatledger --help`` and ``chatledger demo``."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

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


def _imports() -> dict[str, set[tuple[str, bool]]]:
    """Top-level third-party module → {(file:line, imported at module level)}."""
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


def test_click_is_not_imported_directly() -> None:
    # Typer 0.29 vendors its own copy of click; a direct import of click needs a package that
    # a plain install does not bring (the reason this file exists).
    assert "click" not in _imports()


def test_a_plain_install_without_extras_runs_help_and_the_demo(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(ROOT)],
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
    # The SDKs are extras: the plain install has neither, and nothing above needed them.
    missing = subprocess.run(
        [str(python), "-c", "import openai"], capture_output=True, text=True, env=environment
    )
    assert missing.returncode != 0
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
    assert exported.returncode == 2 and "pip install 'chatledger[inspect]'" in exported.stderr
    assert len(exported.stderr.strip().splitlines()) == 1
