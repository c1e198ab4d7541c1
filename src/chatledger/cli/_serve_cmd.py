"""``chatledger serve-local MODEL``: a local GGUF model on 127.0.0.1, for any OpenAI client.

``local:NAME`` in ``--model`` or a config starts (and stops) the same server by itself; this
command is for using the model from elsewhere — another tool, a notebook, a second terminal —
and for checking that a model and runtime work before a long run. It prints the base URL and
the ``openai-compatible:`` id, then serves until Ctrl-C (exit 0).
"""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout, styled


class Runtime(StrEnum):
    auto = "auto"  # llama-server when there is one, else node-llama-cpp
    llama_server = "llama-server"
    node = "node"


@app.command("serve-local")
def serve_local_command(
    model: Annotated[
        str | None,
        typer.Argument(help="a catalogue name (see --list) or a path to a .gguf file"),
    ] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="0: a free port")] = 0,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads for the model")] = 2,
    context: Annotated[int, typer.Option(min=256, help="context window in tokens")] = 8192,
    runtime: Annotated[
        Runtime, typer.Option(help="auto: llama-server when there is one, else node")
    ] = Runtime.auto,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="where assembled model files and server logs go (default: the cache)"),
    ] = None,
    list_models: Annotated[
        bool, typer.Option("--list", help="list the catalogue and which models are here")
    ] = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Serve a local GGUF model on 127.0.0.1 with an OpenAI-compatible /v1/chat/completions."""
    from chatledger.core import EnvironmentFault, InputError
    from chatledger.providers import (
        CATALOGUE,
        LocalServer,
        ServerOptions,
        default_cache_dir,
        locate_model,
        where_model,
    )

    work = cache_dir if cache_dir is not None else default_cache_dir()
    if list_models:
        rows = [
            {
                "name": name,
                "file": entry.file_name,
                "sha256": entry.sha256,
                "source": entry.source,
                "found": where_model(name, work),
                "description": entry.description,
            }
            for name, entry in CATALOGUE.items()
        ]
        if output_format is OutputFormat.json:
            emit_json({"models": rows})
            return
        for row in rows:
            where = row["found"] or styled(f"not here (needs {row['source']})", "dim")
            stdout.print(f"local:{row['name']}  {row['description']}")
            stdout.print("  ", where)
        return
    if model is None:
        raise InputError("name a model to serve (or --list)", field="MODEL")
    # --list prints the names as --model takes them (local:NAME): take that spelling too.
    file = locate_model(model.removeprefix("local:"), work)
    options = ServerOptions(runtime=runtime.value, threads=threads, context=context, port=port)
    with LocalServer.start(file, options, work / "local-logs") as server:
        model_id = f"openai-compatible:{server.base_url}:{file.name}"
        if output_format is OutputFormat.json:
            emit_json(
                {
                    "model": file.name,
                    "sha256": file.sha256,
                    "runtime": server.runtime,
                    "base_url": server.base_url,
                    "model_id": model_id,
                    "log": str(server.log_path),
                }
            )
        else:
            stdout.print(f"serving {file.name} ({server.runtime}) at {server.base_url}")
            stdout.print(f"model id: {model_id}")
            stdout.print(styled(f"log: {server.log_path} — Ctrl-C stops it", "dim"))
        try:
            while server.alive():
                time.sleep(0.5)
        except KeyboardInterrupt:
            stdout.print("stopped")
            return
    raise EnvironmentFault(f"the model server stopped by itself (log: {server.log_path})")
