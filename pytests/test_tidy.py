"""Determinism guard: broker/ (outside the real Env) and sim/ never read the
wall clock, use std::random_device or rand(), start threads, or branch on
'am I simulated?'. The same seed must give the same trace; these are the ways
that silently stops being true."""
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parent.parent

# The real Env is where the outside world is allowed in.
ALLOWED = {
    "broker/env/posix_env.h", "broker/env/posix_env.cc",
    "broker/env/posix_file_system.h", "broker/env/posix_file_system.cc",
    "broker/env/posix_file_preparer.h", "broker/env/posix_file_preparer.cc",
    "broker/env/file_offloader.h", "broker/env/file_offloader.cc",
    "broker/env/mapped_write_fault.h", "broker/env/mapped_write_fault.cc",
    "broker/env/asio_executor.h", "broker/env/asio_executor.cc", "broker/env/asio.h",
}

BANNED = [
    (r"\bsystem_clock\b", "wall clock: use env.clock()"),
    (r"\bsteady_clock\b", "wall clock: use env.clock()"),
    (r"\bhigh_resolution_clock\b", "wall clock: use env.clock()"),
    (r"\brandom_device\b", "unseeded randomness: use env.random()"),
    (r"(?<![\w.])s?rand\s*\(", "unseeded randomness: use env.random()"),
    (r"\btime\s*\(\s*(nullptr|NULL|0)?\s*\)", "wall clock: use env.clock()"),
    (r"\bstd::thread\b", "threads: the core is single-threaded"),
    (r"\bstd::mutex\b", "mutexes: the core is single-threaded"),
    (r"\bsleep_for\b|\busleep\s*\(", "sleeping: schedule on env.executor()"),
    (r"#\s*if(def)?\s+.*\bSIM\b", "#ifdef SIM: broker code cannot tell which world it runs in"),
]


def source_files():
    for folder in ("broker", "sim"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in {".h", ".cc"}:
                continue
            relative = path.relative_to(REPO).as_posix()
            if relative in ALLOWED or "/test/" in relative:
                continue
            yield relative, path


def test_sources_exist():
    assert any(True for _ in source_files()), "no sources found: is the layout right?"


def test_no_banned_names_in_the_deterministic_core():
    problems = []
    for relative, path in source_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            for pattern, why in BANNED:
                if re.search(pattern, code):
                    problems.append(f"{relative}:{number}: {why}: {line.strip()}")
    assert not problems, "\n".join(problems)


def test_broker_never_includes_sim_or_faults():
    problems = []
    for relative, path in source_files():
        if not relative.startswith("broker/"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r'\s*#\s*include\s+"(sim|faults)/', line):
                problems.append(f"{relative}:{number}: {line.strip()}")
    assert not problems, "\n".join(problems)
