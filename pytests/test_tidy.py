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


# The unity build (CMakeLists.txt) compiles a library's .cc files in batches
# of 16, each batch one translation unit: two files of one library that both
# define a file-local function or constant of one name compile only while the
# batch boundaries keep them apart, and adding any file can move them
# together (perf_commands.cc and topic_commands.cc's topic_option() did, on
# 2026-12-06). The libraries, as CMakeLists.txt's mqlab_sources lists them.
UNITY_LIBRARIES = {
    "mqlab_broker": ["broker/common", "broker/env", "broker/store", "broker/meta", "broker/remoting",
                     "broker/namesrv", "broker/processor", "broker/client", "broker/ha", "broker/config",
                     "broker/admin_cli", "broker/http"],
    "mqlab_sim": ["sim"],
    "mqlab_faults": ["faults"],
}
# A definition at the start of a line inside `namespace {`: a function (its
# name before the parameter list) or a k-named constant.
FILE_LOCAL_FUNCTION = re.compile(r"^(?:(?:static|inline|constexpr|template\s*<[^>]*>)\s+)*"
                                 r"[A-Za-z_][\w:<>,*&\s]*?[\s*&](\w+)\s*\("
                                 r"(?:[^;]*$|[^;{]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{)")  # or a one-line body
FILE_LOCAL_CONSTANT = re.compile(r"^(?:constexpr|const)\s+[\w:<>,\s]+?\s(k\w+)\s*[=\[{]")
NOT_A_DEFINITION = ("return", "if", "for", "while", "switch", "case", "using", "struct", "class", "enum",
                    "function", "const ", "let ", "var ")  # the last: the console pages' inline JavaScript


def file_local_names(path):
    names = set()
    in_anonymous = False
    for line in path.read_text().splitlines():
        if re.match(r"^namespace\s*\{", line):
            in_anonymous = True
            continue
        if in_anonymous and re.match(r"^\}\s*//\s*namespace", line):
            in_anonymous = False
            continue
        if not in_anonymous or not line or line[0] in " \t}/#" or line.startswith(NOT_A_DEFINITION):
            if in_anonymous and (m := FILE_LOCAL_CONSTANT.match(line)):
                names.add(m.group(1))
            continue
        for pattern in (FILE_LOCAL_FUNCTION, FILE_LOCAL_CONSTANT):
            if m := pattern.match(line):
                names.add(m.group(1))
    return names


def test_file_local_names_are_unique_within_each_unity_library():
    problems = []
    for library, folders in UNITY_LIBRARIES.items():
        defined_in = {}
        for folder in folders:
            for path in sorted((REPO / folder).glob("*.cc")):
                for name in file_local_names(path):
                    defined_in.setdefault(name, []).append(path.relative_to(REPO).as_posix())
        assert defined_in, f"{library}: no file-local names found: is the layout right?"
        for name, files in sorted(defined_in.items()):
            if len(files) > 1:
                problems.append(f"{library}: '{name}' is file-local in {', '.join(files)}")
    assert not problems, "rename all but one (a unity batch may join them):\n" + "\n".join(problems)
