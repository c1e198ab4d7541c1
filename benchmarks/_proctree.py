"""A process tree measured from outside, from /proc: peak memory and CPU of a run and every
descendant (its pool's or cluster's workers, the forkserver, the resource tracker).

psutil is not a direct dependency of ChatLedger (it arrives only with ``distributed``), so
/proc is read directly; Linux only, as the benchmarks are.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
TICKS = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, RSS kB, user + system clock ticks), from /proc."""
    found: dict[int, tuple[int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            # After the command: state ppid … utime(12) stime(13) … rss(22), 0-based from state.
            found[int(entry)] = (
                int(fields[1]),
                int(fields[21]) * PAGE_KB,
                int(fields[11]) + int(fields[12]),
            )
        except (OSError, IndexError, ValueError):
            continue
    return found


def tree(root: int, table: dict[int, tuple[int, int, int]]) -> list[int]:
    """``root`` and every descendant of it present in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in table:
            found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def measure(
    command: Sequence[str], *, every_s: float = 0.1, timeline_s: float | None = None
) -> dict[str, Any]:
    """Run ``command`` (stdout dropped) and return its wall seconds, CPU seconds of the whole
    tree (each process counted at its last sample: a process's last ``every_s`` may be
    missed), peak memory (largest sum of RSS at one sample, MB) and how many processes the
    tree had. With ``timeline_s``, also ``timeline``: [seconds since the start, the largest
    tree RSS (MB) in that window] per window of ``timeline_s`` seconds (where the peak is
    reached). A non-zero exit stops the benchmark with the end of its stderr."""
    started = time.perf_counter()
    process = subprocess.Popen(
        list(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak_kb, cpu_ticks, done = 0, {}, threading.Event()
    windows: dict[int, int] = {}

    def sample() -> None:
        nonlocal peak_kb
        while not done.is_set():
            table = processes()
            pids = tree(process.pid, table)
            rss_kb = sum(table[pid][1] for pid in pids)
            peak_kb = max(peak_kb, rss_kb)
            if timeline_s is not None:
                window = int((time.perf_counter() - started) / timeline_s)
                windows[window] = max(windows.get(window, 0), rss_kb)
            for pid in pids:
                cpu_ticks[pid] = table[pid][2]
            time.sleep(every_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{command[-1]}: exit {process.returncode}: {err[-2000:]}")
    result: dict[str, Any] = {
        "wall_s": round(wall, 2),
        "cpu_s": round(sum(cpu_ticks.values()) / TICKS, 2),
        "peak_tree_mb": round(peak_kb / 1024, 1),
        "processes": len(cpu_ticks),
    }
    if timeline_s is not None:
        result["timeline"] = [
            [round(w * timeline_s, 1), round(kb / 1024, 1)] for w, kb in sorted(windows.items())
        ]
    return result
