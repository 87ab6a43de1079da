"""What bench/load.py and bench/tour_load.py print: per step the latency's percentiles, bytes and messages; errors;
the server's CPU and memory, and every process's peak memory (a live training's included)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.students.student import ErrorRecord, SessionOutcome, StepRecord

FIRST_ERRORS = 8  # errors listed in the table; the rest are counted


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


@dataclass
class Report:
    target: str
    sessions: int
    settings: dict
    outcomes: list[SessionOutcome]
    wall_s: float
    server_cpu_s: float | None = None  # all measured processes together, with their children
    children_cpu_s: float = 0.0  # of which their child processes' (a live training)
    processes: dict = field(default_factory=dict)  # pid -> {"command", "server", "peak"}: meter.Meter.processes
    started: float = 0.0  # time.perf_counter() when the class began (after the warm-up)
    timeline: list = field(default_factory=list)  # meter.Meter.timeline: (perf_counter, own CPU s, with children)
    solo: list[StepRecord] = field(default_factory=list)  # the steps of one student alone, before the class
    server_cpu_by_pid: dict = field(default_factory=dict)
    rss_mb_by_pid: dict = field(default_factory=dict)  # at the end of the load
    client_cpu_s: float = 0.0
    rss_mb: dict = field(default_factory=dict)  # before, peak, end, after_disconnect
    active_sessions: dict = field(default_factory=dict)  # before, end, after_disconnect (the server's gauge)
    peak_connected: int = 0  # sessions with an open websocket at once, as the client counted them
    warmup_errors: list[ErrorRecord] = field(default_factory=list)

    @property
    def steps(self) -> list[StepRecord]:
        return [s for o in self.outcomes for s in o.steps]

    @property
    def errors(self) -> list[ErrorRecord]:
        return self.warmup_errors + [e for o in self.outcomes for e in o.errors]

    @property
    def completed(self) -> int:
        return sum(o.completed for o in self.outcomes)

    @property
    def servers(self) -> int:
        """Server processes measured (--pid given several times: the compose stack's replicas)."""
        return len(self.settings.get("pids", [])) or 1

    @property
    def peak_one_server_bytes(self) -> float:
        """The largest server tree's peak RSS (each replica has its own memory limit), the only one's if one."""
        return self.rss_mb.get("peak of one server", self.rss_mb.get("peak", 0)) * 2**20

    @property
    def order(self) -> list[str]:
        """Every step kind of the scripts, in the order of the longest script (then of the others)."""
        found: dict[str, None] = {}
        for outcome in sorted(self.outcomes, key=lambda o: -len(o.expected)):
            found.update(dict.fromkeys(outcome.expected))
        found.update(dict.fromkeys(s.kind for s in self.steps))
        return list(found)

    def by_step(self) -> dict[str, dict]:
        rows = {}
        connects = [o.connect_ms for o in self.outcomes if o.connect_ms is not None]
        if connects:
            rows["connect"] = {"n": len(connects), "p50_ms": percentile(connects, 50),
                               "p95_ms": percentile(connects, 95), "max_ms": max(connects), "mean_kb": None}
        for kind in self.order:
            done = [s for s in self.steps if s.kind == kind and not math.isnan(s.ms)]
            ms = [s.ms for s in done]
            rows[kind] = {"n": len(done), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95),
                          "max_ms": max(ms) if ms else math.nan,
                          "mean_kb": sum(s.bytes for s in done) / len(done) / 1024 if done else math.nan,
                          "mean_messages": sum(s.messages for s in done) / len(done) if done else math.nan,
                          "fragment_runs": sum(s.fragment_run for s in done)}
        return rows

    def table(self) -> str:
        s = self.settings
        think = "none (burst)" if s["burst"] else f"{s['think'][0]:g}-{s['think'][1]:g} s"
        tour = s.get("script") == "tour"
        live = f", a live training on /{s['live']} started by student {s['live_student']}" if s.get("live") else ""
        rows = self.by_step()
        width = max(10, *map(len, rows))
        lines = [(f"{self.target}: {self.sessions} sessions, ramp {s['ramp']:g} s, think {think}, seed {s['seed']}, "
                  + (f"the guided tour{live}" if tour else f"~{s['tokens']}-token sentences")
                  + (f", opened with ?{s['query']}" if s.get("query") and not tour else "")),
                 f"{'step':<{width}} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'mean KB':>8} {'msgs':>5}  "
                 + ("alone: ms, server CPU ms  " if self.solo else "") + "fragment runs"]
        alone = {}
        for s in self.solo:
            alone.setdefault(s.kind, []).append(s)
        for kind, r in rows.items():
            kb = "" if r["mean_kb"] is None else f"{r['mean_kb']:.1f}"
            frag = "" if "fragment_runs" not in r else str(r["fragment_runs"])
            msgs = "" if "mean_messages" not in r else f"{r['mean_messages']:.0f}"
            solo = alone.get(kind, [])
            cpu = [s.cpu_ms for s in solo if s.cpu_ms is not None]  # none for a mark within a step (its first word)
            solo = (f"{percentile([s.ms for s in solo], 50):>9.0f} {percentile(cpu, 50) if cpu else math.nan:>15.0f}  "
                    if solo else " " * 27 if self.solo else "")
            lines.append(f"{kind:<{width}} {r['n']:>4} {r['p50_ms']:>8.0f} {r['p95_ms']:>8.0f} {r['max_ms']:>8.0f} "
                         f"{kb:>8} {msgs:>5}  {solo}{frag}")
        lines.append(f"sessions {self.sessions} ({self.completed} completed every step, at most "
                     f"{self.peak_connected} connected at once), steps {len(self.steps)}, errors {len(self.errors)}, "
                     f"wall {self.wall_s:.1f} s")
        if self.server_cpu_s is not None:
            own = self.server_cpu_s - self.children_cpu_s
            lines.append(f"server CPU {self.server_cpu_s:.1f} s ({self.server_cpu_s / max(1, self.sessions):.2f} s "
                         f"per session); client CPU {self.client_cpu_s:.1f} s (this process, same machine)")
            if self.children_cpu_s > 0.05:
                lines.append(f"  of which the server process {own:.1f} s ({own / max(1, self.sessions):.2f} s per "
                             f"session), its child processes {self.children_cpu_s:.1f} s")
        else:
            lines.append(f"server CPU: not measured (no --pid); client CPU {self.client_cpu_s:.1f} s")
        if self.rss_mb:
            r = self.rss_mb
            lines.append("server RSS MB: " + ", ".join(f"{k.replace('_', ' ')} {v:.0f}" for k, v in r.items()))
        if len(self.server_cpu_by_pid) > 1:
            lines.append("per process: " + ", ".join(
                f"pid {pid} CPU {cpu:.1f} s RSS {self.rss_mb_by_pid[pid]:.0f} MB"
                for pid, cpu in self.server_cpu_by_pid.items()))
        if self.processes:
            lines.append("peak RSS per process (VmHWM): " + "; ".join(
                f"pid {pid} {p['command']} {p['peak'] / 2**20:.0f} MB" for pid, p in self.processes.items()))
        for outcome in self.outcomes:
            if "live" in outcome.notes:
                n = outcome.notes["live"]
                seconds = "?" if n["seconds"] is None else f"{n['seconds']:.1f}"
                lines.append(f"live training (student {outcome.index}, /{n['page']}): "
                             f"{'finished' if n['finished'] else 'NOT finished'}, {n['steps']} steps, watched "
                             f"{seconds} s from the start press, {n['polls']} polls")
        if any(v is not None for v in self.active_sessions.values()):
            lines.append("server active sessions: " + ", ".join(
                f"{k.replace('_', ' ')} {'?' if v is None else v}" for k, v in self.active_sessions.items()))
        for e in self.errors[:FIRST_ERRORS]:
            lines.append(f"  error: session {e.session} step {e.step}: {e.message}")
        if len(self.errors) > FIRST_ERRORS:
            lines.append(f"  ... and {len(self.errors) - FIRST_ERRORS} more errors")
        return "\n".join(lines)
