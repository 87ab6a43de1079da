"""What the server processes cost while bench/load.py's class runs: CPU seconds and RSS read from /proc (each
process with its descendants), and the server's own gauge of open sessions."""
from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from harness.students.http import http_get

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def process_tree(pids: Sequence[int]) -> list[int]:
    """The given processes and every live descendant."""
    tree, out, todo = _children(), [], list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.append(pid)
            todo.extend(tree.get(pid, []))
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process, plus those of its waited-for children (cutime + cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK  # fields 14-17 of proc(5)


def own_cpu_seconds(pid: int) -> float:
    """utime + stime of the process alone (not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    """The process's resident memory now (VmRSS), or its peak so far (field="VmHWM"); 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def command(pid: int) -> str:
    """What the process runs, shortly: its program's name and first three arguments."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return "?"
    return " ".join([Path(argv[0]).name, *argv[1:4]]).strip()


class Meter:
    """CPU seconds and RSS of the server processes (each with its descendants)."""

    def __init__(self, pids: Sequence[int]):
        self.pids = list(pids)
        self.peak = 0  # bytes: the peak of all the servers' trees at once
        self.peaks: dict[int, int] = {}  # bytes: each server's tree's peak (one replica's limit bounds this)
        # every process seen in the servers' trees (the servers and their children: a live training), by pid:
        # {"command", "server" (the server pid it runs under), "peak" (bytes: the largest VmHWM read)}
        self.processes: dict[int, dict] = {}
        self.timeline: list[tuple[float, float, float]] = []  # (perf_counter, own CPU s, CPU s with children)

    def cpu(self) -> dict[int, float]:
        """CPU seconds so far of each given process (with its descendants)."""
        return {pid: sum(cpu_seconds(p) for p in process_tree([pid])) for pid in self.pids}

    def rss(self) -> dict[int, int]:
        """RSS bytes now of each given process (with its descendants); the peak of their sum is kept, and each one's."""
        value = {}
        for server in self.pids:
            value[server] = 0
            for pid in process_tree([server]):
                value[server] += rss_bytes(pid)
                seen = self.processes.setdefault(pid, {"command": command(pid), "server": server, "peak": 0})
                seen["peak"] = max(seen["peak"], rss_bytes(pid, "VmHWM"))
        self.peak = max(self.peak, sum(value.values()))
        for server, rss in value.items():
            self.peaks[server] = max(self.peaks.get(server, 0), rss)
        return value

    def own_cpu(self) -> dict[int, float]:
        """CPU seconds so far of each given process alone (its children's, once ended, count in cpu() only)."""
        return {pid: own_cpu_seconds(pid) for pid in self.pids}

    async def sample(self, every: float = 0.25) -> None:
        """The RSS peaks (rss()) and the timeline of CPU seconds, every `every` s until cancelled."""
        while True:
            self.rss()
            self.timeline.append((time.perf_counter(), sum(self.own_cpu().values()), sum(self.cpu().values())))
            await asyncio.sleep(every)


async def active_sessions(url: str | None) -> int | None:
    """The server's own gauge of sessions with an open websocket (/_stcore/metrics)."""
    if url is None:
        return None
    parts = urlsplit(url)
    try:
        _, raw = await http_get(parts.hostname, parts.port or 80,
                                parts.path.rstrip("/") + "/_stcore/metrics?families=active_sessions", {}, 10)
    except (OSError, TimeoutError):
        return None
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.startswith("active_sessions "):
            return int(float(line.split()[1]))
    return None
