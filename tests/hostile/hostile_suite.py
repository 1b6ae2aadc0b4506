#!/usr/bin/env python3
"""The hostile-system suite (issue 20): dlenv on a broken machine.

Builds a hostile case at a time under a scratch directory -- truncated and mutated copies of
real ELF libraries (the build machine's /usr/local/cuda; fakes compiled from tests/fixtures when
it is absent) on LD_LIBRARY_PATH and in a toolkit, libraries that crash, hang, exit or print
garbage when loaded, FIFOs, sockets and device nodes where libraries and headers are expected,
invalid UTF-8 and escape bytes in paths and environment values, huge and endless env files, a
10 000-object dependency closure -- and runs doctor, deps, load, which and `cudnn inspect` on
it (with --json). Each run must end with a documented status (0-3), never by a signal, within
10 s, print valid JSON, and (where the case has one broken file) name that file.

Usage: hostile_suite.py --dlenv PATH [--quick | --full] [--jobs N] [--cc CC]
                        [--known-failures FILE] [--keep DIR]
  --quick             one case of each kind (the form ctest runs, seconds)
  --full              more truncation points and mutated copies (a longer run)
  --jobs N            runs at once (4)
  --known-failures F  case/command ids (one a line, '#' comments) expected to fail on this
                      branch; they are reported, not counted as failures (an id that passes is
                      reported as fixed)
Prints one line per case and command, then the counts; exits 1 on any unexpected failure.
Python 3 standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
# The bound issue 20 sets for every run; --time-limit raises it for the sanitizer build.
TIME_LIMIT = 10.0
CUDA_LIB = "/usr/local/cuda/lib64"


# --- Sources: real libraries when the machine has CUDA, fakes compiled here otherwise -----

def compile_fake(cc, src, out, defines=()):
    subprocess.run([cc, "-x", "c", "-shared", "-fPIC", *defines, os.path.join(FIXTURES, src),
                    "-o", out], check=True)
    return out


def sources(work, cc):
    """name -> path of a loadable library, for the names dlenv loads live."""
    d = os.path.join(work, "src")
    os.makedirs(d, exist_ok=True)
    out = {
        "libnvidia-ml.so.1": compile_fake(cc, "fake_nvml.c", os.path.join(d, "libnvidia-ml.so.1")),
        "libcuda.so.1": compile_fake(cc, "fake_libcuda.c", os.path.join(d, "libcuda.so.1")),
        "libcudnn.so.9": compile_fake(cc, "fake_cudnn.c", os.path.join(d, "libcudnn.so.9")),
    }
    for kind in ("SEGV", "HANG", "ABORT"):
        out["ctor-" + kind.lower()] = compile_fake(
            cc, "hostile_constructor.c", os.path.join(d, f"libhostile_{kind.lower()}.so"),
            [f"-DHOSTILE_CONSTRUCTOR_{kind}"])
    real = {}
    for name in ("libcudnn.so.9", "libcudart.so.13"):
        p = os.path.join(CUDA_LIB, name)
        if os.path.isfile(p) and os.path.getsize(p) < 8 << 20:
            real[name] = os.path.realpath(p)
    return out, real


def elf_load_end(path):
    """Where the last PT_LOAD segment's file bytes end (ELF64 LE), and the program headers'."""
    with open(path, "rb") as f:
        b = f.read(1 << 16)
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    end = 0
    for i in range(phnum):
        o = phoff + i * phentsize
        p_type, = struct.unpack_from("<I", b, o)
        p_offset, = struct.unpack_from("<Q", b, o + 8)
        p_filesz, = struct.unpack_from("<Q", b, o + 32)
        if p_type == 1:
            end = max(end, p_offset + p_filesz)
    return end, phoff + phnum * phentsize


def write_cut(src, dst, n):
    with open(src, "rb") as f:
        data = f.read(n)
    with open(dst, "wb") as f:
        f.write(data)


def write_mutated(src, dst, rng, flips):
    with open(src, "rb") as f:
        data = bytearray(f.read())
    head = min(len(data), 4096)
    for _ in range(flips):
        i = rng.randrange(head)
        data[i] = rng.randrange(256)
    with open(dst, "wb") as f:
        f.write(data)


# --- A 10 000-object dependency closure of minimal ELF files ----------------------------

def minimal_elf(soname, needed):
    """An ELF64 x86-64 shared object: one PT_LOAD over the file, PT_DYNAMIC with DT_NEEDED,
    DT_SONAME, DT_RUNPATH=$ORIGIN, DT_STRTAB/DT_STRSZ."""
    strtab = b"\0"
    offs = {}
    for s in [soname, "$ORIGIN", *needed]:
        offs[s] = len(strtab)
        strtab += s.encode() + b"\0"
    str_off = 64 + 2 * 56
    dyn_off = (str_off + len(strtab) + 7) & ~7
    dyn = b""
    for n in needed:
        dyn += struct.pack("<qQ", 1, offs[n])
    dyn += struct.pack("<qQ", 14, offs[soname]) + struct.pack("<qQ", 29, offs["$ORIGIN"])
    dyn += struct.pack("<qQ", 5, str_off) + struct.pack("<qQ", 10, len(strtab))
    dyn += struct.pack("<qQ", 0, 0)
    size = dyn_off + len(dyn)
    eh = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    eh += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, size, size, 0x1000)
    ph += struct.pack("<IIQQQQQQ", 2, 4, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 8)
    body = eh + ph + strtab
    body += b"\0" * (dyn_off - len(body))
    return body + dyn


def write_closure(d, fanout):
    os.makedirs(d, exist_ok=True)
    names = []
    for i in range(fanout):
        kids = [f"libhx_{i}_{j}.so" for j in range(fanout)]
        for k in kids:
            with open(os.path.join(d, k), "wb") as f:
                f.write(minimal_elf(k, []))
        n = f"libhx_{i}.so"
        with open(os.path.join(d, n), "wb") as f:
            f.write(minimal_elf(n, kids))
        names.append(n)
    root = os.path.join(d, "libhx_root.so")
    with open(root, "wb") as f:
        f.write(minimal_elf("libhx_root.so", names))
    return root


# --- Cases -------------------------------------------------------------------------------

class Case:
    def __init__(self, cid, env=None, target="libcudnn.so.9", broken=None, inspect=None,
                 env_file=None, which_lib=None, commands=None, named=True, text=False):
        self.id = cid
        self.env = env or {}
        self.target = target       # deps / load target (a name or path)
        self.broken = broken       # the file a finding must name (bytes path), or None
        self.inspect = inspect     # cudnn inspect argument (a directory), or None
        self.env_file = env_file   # --env-file for doctor, deps, load
        self.which_lib = which_lib  # a library a helper process maps, for which --pid
        self.commands = commands or ["doctor", "deps", "load", "which", "inspect"]
        self.named = named
        self.text = text           # also run deps and load in text form: no raw control bytes


def toolkit_with(root, lib_name, lib_src_or_kind, header="ok"):
    """A CUDA-toolkit-like tree (version.json, include/, lib64/) holding one cuDNN entry."""
    os.makedirs(os.path.join(root, "lib64"), exist_ok=True)
    os.makedirs(os.path.join(root, "include"), exist_ok=True)
    with open(os.path.join(root, "version.json"), "w") as f:
        json.dump({"cuda": {"name": "CUDA SDK", "version": "13.0.0"}}, f)
    hdr = os.path.join(root, "include", "cudnn_version.h")
    if header == "ok":
        with open(hdr, "w") as f:
            f.write("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n")
    else:
        special(hdr, header)
    lib = os.path.join(root, "lib64", lib_name)
    if isinstance(lib_src_or_kind, tuple):
        lib_src_or_kind[0](lib)
    elif lib_src_or_kind in ("fifo", "socket", "device", "dir"):
        special(lib, lib_src_or_kind)
    else:
        shutil.copyfile(lib_src_or_kind, lib)
    return lib


SOCKETS = []


def special(path, kind):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        SOCKETS.append(s)
    elif kind == "device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # /dev/zero
        except PermissionError:
            os.symlink("/dev/zero", path)
    elif kind == "dir":
        os.makedirs(path)


def constructor_cases(fakes, newdir):
    """Libraries whose constructor crashes, aborts or hangs: given to load and deps by path,
    and named libnvidia-ml.so.1 / libcuda.so.1 on LD_LIBRARY_PATH for the doctor's probes."""
    cases = []
    for kind in ("segv", "abort", "hang"):
        src = fakes["ctor-" + kind]
        d = newdir(f"ctor-{kind}")
        lib = os.path.join(d, os.path.basename(src))
        shutil.copyfile(src, lib)
        cases.append(Case(f"a library whose constructor does {kind}, by path", target=lib,
                          commands=["load", "deps"], named=False))
        for name in ("libnvidia-ml.so.1", "libcuda.so.1"):
            d = newdir(f"ctor-{kind}-{name}")
            shutil.copyfile(src, os.path.join(d, name))
            cases.append(Case(f"{name} whose constructor does {kind}, on LD_LIBRARY_PATH",
                              env={"LD_LIBRARY_PATH": d}, target=name, commands=["doctor"],
                              named=False))
    return cases


def special_target_cases(newdir):
    """A FIFO, a socket, a directory and /dev/zero given to load and deps as the library."""
    cases = [Case("/dev/zero given as the library", target="/dev/zero",
                  commands=["load", "deps"], broken="/dev/zero")]
    for kind in ("fifo", "socket", "dir"):
        d = newdir(f"target-{kind}")
        p = os.path.join(d, "libcudnn.so.9")
        special(p, kind)
        cases.append(Case(f"a {kind} given as the library", target=p, commands=["load", "deps"],
                          broken=p))
    return cases


def escape_cases(work, fakes):
    """Invalid UTF-8, ESC sequences and BEL in a library's directory and file name."""
    bad = b"bad-\xff\xfe-\x1b[31mred\x1b[0m-\x07"
    d = os.path.join(work.encode(), b"c-esc-" + bad)
    os.makedirs(d)
    lib = os.path.join(d, b"libcudnn" + bad + b".so.9")
    shutil.copyfile(fakes["libcudnn.so.9"], lib)
    missing = os.path.join(d, b"libmissing-\x1b]0;title\x07.so")
    return [Case("invalid UTF-8 and escape bytes in a library's path", target=lib,
                 commands=["load", "deps"], named=False, text=True),
            Case("invalid UTF-8 and escape bytes in a missing library's path", target=missing,
                 commands=["load", "deps"], named=False, text=True)]


def dir_maker(work, prefix):
    """A function that makes a new numbered case directory under `work` ("c001-TAG")."""
    n = [0]

    def newdir(tag):
        n[0] += 1
        d = os.path.join(work, f"{prefix}{n[0]:03d}-{tag}")
        os.makedirs(d)
        return d
    return newdir


def build_quick_cases(work, cc):
    """The quick form (ctest): one case of each kind, seconds in all."""
    fakes, _ = sources(work, cc)
    cases = []
    newdir = dir_maker(work, "q")

    src = fakes["libcudnn.so.9"]
    size = os.path.getsize(src)
    load_end, ph_end = elf_load_end(src)
    for cut_name, cut in (("header", 40), ("phdrs", ph_end - 8), ("segment", load_end // 2)):
        d = newdir(f"trunc-{cut_name}")
        dst = os.path.join(d, "libcudnn.so.9")
        write_cut(src, dst, cut)
        cases.append(Case(f"truncated libcudnn.so.9 ({cut_name}: {cut} of {size} bytes), by path",
                          target=dst, broken=dst, commands=["load", "deps"]))
    d = newdir("trunc-nvml")
    dst = os.path.join(d, "libnvidia-ml.so.1")
    write_cut(fakes["libnvidia-ml.so.1"], dst, elf_load_end(fakes["libnvidia-ml.so.1"])[0] // 2)
    cases.append(Case("truncated libnvidia-ml.so.1 on LD_LIBRARY_PATH",
                      env={"LD_LIBRARY_PATH": d}, target="libnvidia-ml.so.1", broken=dst,
                      commands=["doctor", "load"]))
    cases += constructor_cases(fakes, newdir)
    cases += special_target_cases(newdir)
    cases += escape_cases(work, fakes)
    return cases


def build_cases(work, cc, full):
    rng = random.Random(20)
    fakes, real = sources(work, cc)
    cases = []
    newdir = dir_maker(work, "c")

    # Truncated copies on LD_LIBRARY_PATH: each name dlenv loads live, cut inside the
    # ELF header, the program headers, and the loadable segments.
    libs = {k: v for k, v in fakes.items() if k.startswith("lib")}
    for name, path in real.items():
        libs["real-" + name] = path
    for label, src in sorted(libs.items()):
        name = label.replace("real-", "")
        size = os.path.getsize(src)
        load_end, ph_end = elf_load_end(src)
        cuts = {"header": 40, "phdrs": max(64, ph_end - 8), "segment": load_end // 2}
        if full:
            cuts.update({"tiny": 3, "page": 4096, "90pct": size * 9 // 10, "last": load_end - 1})
        for cut_name, cut in sorted(cuts.items()):
            if cut <= 0 or cut >= size:
                continue
            d = newdir(f"trunc-{label}-{cut_name}")
            dst = os.path.join(d, name)
            write_cut(src, dst, cut)
            # Cut past the last loadable segment (only the section headers and the symbol
            # table lost), the library still loads and runs: nothing to name, no crash allowed.
            loadable = cut >= load_end
            cases.append(Case(f"truncated {label} ({cut_name}: {cut} of {size} bytes"
                              f"{', past its segments' if loadable else ''}) on LD_LIBRARY_PATH",
                              env={"LD_LIBRARY_PATH": d}, target=name,
                              broken=None if loadable else dst, named=not loadable, inspect=d))
    # The same in a toolkit found through CUDA_HOME.
    for label, src in sorted(libs.items()):
        if "cudnn" not in label:
            continue
        d = newdir(f"tk-trunc-{label}")
        tk = os.path.join(d, "cuda-13.0")
        load_end, _ = elf_load_end(src)
        lib = toolkit_with(tk, "libcudnn.so.9",
                           (lambda p, s=src, c=load_end // 2: write_cut(s, p, c),))
        cases.append(Case(f"truncated {label} in a toolkit (CUDA_HOME)", env={"CUDA_HOME": tk},
                          target=lib, broken=lib, inspect=tk))
    # Mutated copies (random bytes in the first page: headers, program headers, dynamic).
    mutations = 40 if full else 6
    for i in range(mutations):
        label, src = sorted(libs.items())[i % len(libs)]
        name = label.replace("real-", "")
        d = newdir(f"mut-{i}")
        dst = os.path.join(d, name)
        write_mutated(src, dst, rng, 1 + i % 8)
        cases.append(Case(f"mutated {label} #{i} on LD_LIBRARY_PATH", env={"LD_LIBRARY_PATH": d},
                          target=name, inspect=d, named=False))
    # Libraries that crash, hang, exit or print garbage when loaded (fake NVML modes).
    for mode in ("segv", "hang", "exit", "garbage"):
        d = newdir(f"nvml-{mode}")
        dst = os.path.join(d, "libnvidia-ml.so.1")
        shutil.copyfile(fakes["libnvidia-ml.so.1"], dst)
        cases.append(Case(f"libnvidia-ml.so.1 that does {mode} in nvmlInit",
                          env={"LD_LIBRARY_PATH": d, "FAKE_NVML_MODE": mode},
                          target="libnvidia-ml.so.1", broken=None, commands=["doctor", "deps",
                                                                             "load"]))
    cases += constructor_cases(fakes, newdir)
    cases += special_target_cases(newdir)
    # Special files where libraries and headers are expected.
    for kind in ("fifo", "socket", "device", "dir"):
        for name in ("libnvidia-ml.so.1", "libcuda.so.1", "libcudnn.so.9"):
            d = newdir(f"{kind}-{name}")
            p = os.path.join(d, name)
            special(p, kind)
            cases.append(Case(f"{kind} named {name} on LD_LIBRARY_PATH",
                              env={"LD_LIBRARY_PATH": d}, target=name, broken=p, inspect=d,
                              named=kind != "dir"))
        d = newdir(f"tk-{kind}-header")
        tk = os.path.join(d, "cuda-13.0")
        toolkit_with(tk, "libcudnn.so.9", fakes["libcudnn.so.9"], header=kind)
        cases.append(Case(f"{kind} where cudnn_version.h should be (toolkit via CUDA_HOME)",
                          env={"CUDA_HOME": tk}, target=os.path.join(tk, "lib64", "libcudnn.so.9"),
                          inspect=tk, named=False))
    # Invalid UTF-8 and escape bytes in paths and environment values.
    bad = b"bad-\xff\xfe-\x1b[31mred\x1b[0m-\x07"
    d = os.path.join(work.encode(), b"c-bytes-" + bad)
    os.makedirs(d)
    lib = os.path.join(d, b"libcudnn.so.9")
    shutil.copyfile(fakes["libcudnn.so.9"], lib)
    cases.append(Case("invalid UTF-8 and escape bytes in an LD_LIBRARY_PATH directory name",
                      env={b"LD_LIBRARY_PATH": d}, target="libcudnn.so.9", inspect=d,
                      which_lib=lib, named=False, text=True))
    cases.append(Case("invalid UTF-8 and escape bytes in PATH, CUDA_HOME and CUDA_VISIBLE_DEVICES",
                      env={b"PATH": d + b":" + os.environ.get("PATH", "/usr/bin").encode(),
                           b"CUDA_HOME": d, b"CUDA_VISIBLE_DEVICES": b"0,\xff\x1b]0;x\x07"},
                      target=lib, inspect=d, named=False, text=True))
    tk = os.path.join(work.encode(), b"c-tk-" + bad)
    toolkit_with(tk.decode("utf-8", "surrogateescape"), "libcudnn.so.9", fakes["libcudnn.so.9"])
    cases.append(Case("a toolkit directory whose name has invalid UTF-8 and escape bytes",
                      env={b"CUDA_HOME": tk}, target=os.path.join(tk, b"lib64", b"libcudnn.so.9"),
                      inspect=tk, named=False))
    cases += escape_cases(work, fakes)
    # Huge and endless env files.
    d = newdir("envfile")
    huge = os.path.join(d, "huge.env")
    with open(huge, "w") as f:
        line = "X" * 200 + "=" + "y" * 800 + "\n"
        for _ in range((64 if full else 24) << 10):
            f.write(line)
    cases.append(Case("a 24 MB env file" if not full else "a 64 MB env file", env_file=huge,
                      commands=["doctor", "deps", "load"], named=False))
    cases.append(Case("--env-file /dev/zero (endless)", env_file="/dev/zero",
                      commands=["doctor", "deps", "load"], named=False))
    d = newdir("envfile-bytes")
    ef = os.path.join(d, "bytes.env")
    with open(ef, "wb") as f:
        f.write(b"LD_LIBRARY_PATH=/opt/\xff\xfe\x1b[2J\nPATH=/usr/bin:\x07/x\nCUDA_HOME=\x00x\n")
    cases.append(Case("an env file with invalid UTF-8, escape and NUL bytes", env_file=ef,
                      commands=["doctor", "deps", "load"], named=False))
    # A 10 000-object dependency closure.
    d = newdir("closure")
    root = write_closure(d, 100)
    cases.append(Case("a 10 101-object dependency closure", env={"LD_LIBRARY_PATH": d},
                      target=root, commands=["doctor", "deps", "load"], named=False))
    return cases


# --- Running -------------------------------------------------------------------------------

def case_env(case):
    env = dict(os.environb)
    env.pop(b"LD_LIBRARY_PATH", None)
    env.pop(b"FAKE_NVML_MODE", None)
    for k, v in case.env.items():
        env[k.encode() if isinstance(k, str) else k] = v.encode() if isinstance(v, str) else v
    return env


def b(x):
    return x if isinstance(x, bytes) else str(x).encode()


def command_line(dlenv, case, cmd, helper_pid):
    env_file = [b"--env-file", b(case.env_file)] if case.env_file else []
    if cmd == "doctor":
        return [b(dlenv), b"doctor", b"--json", *env_file]
    if cmd == "deps":
        return [b(dlenv), b"deps", b(case.target), b"--json", *env_file]
    if cmd == "load":
        return [b(dlenv), b"load", b(case.target), b"--json", *env_file]
    if cmd == "which":
        return [b(dlenv), b"which", b"--pid", b(helper_pid), b"--json"]
    if cmd == "inspect":
        return [b(dlenv), b"cudnn", b"inspect", b(case.inspect), b"--json"]
    if cmd in ("deps-text", "load-text"):
        return [b(dlenv), b(cmd[:-5]), b(case.target), *env_file]
    raise ValueError(cmd)


def raw_control(data):
    """The first control byte a terminal would act on (ESC, BEL, CSI...), or None."""
    for i, c in enumerate(data):
        if (c < 0x20 and c not in (0x09, 0x0a)) or c == 0x7f or c == 0x9b:
            return f"byte {c:#04x} at {i}: {data[max(0, i - 20):i + 20]!r}"
    return None


def named_in(doc, broken):
    """Whether a finding (doctor) or the answer (load) names the broken file."""
    want = broken.decode("utf-8", "surrogateescape") if isinstance(broken, bytes) else broken
    text = json.dumps(doc.get("findings", doc), ensure_ascii=False)
    return want in text or json.dumps(want)[1:-1] in text


def run_one(dlenv, case, cmd, helper_pid):
    argv = command_line(dlenv, case, cmd, helper_pid)
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=case_env(case), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=TIME_LIMIT,
                           start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return "hang", f"no answer within {TIME_LIMIT:.0f} s", time.monotonic() - t0
    took = time.monotonic() - t0
    if p.returncode < 0:
        return "crash", f"killed by {signal.Signals(-p.returncode).name}", took
    if p.returncode > 3:
        return "bad-exit", f"exit {p.returncode}: {p.stderr[-200:]!r}", took
    if cmd.endswith("-text"):
        raw = raw_control(p.stdout) or raw_control(p.stderr)
        if raw:
            return "raw-escape", f"exit {p.returncode}: {raw}", took
        return "ok", f"exit {p.returncode}", took
    if p.returncode == 2 and not p.stdout.strip():
        # A usage error (no such file, not an ELF file: docs/deps.md; an --env-file over its
        # limit): no report, a message on stderr that names the file.
        if case.broken and b(case.broken) not in p.stderr:
            return "unnamed", f"exit 2: stderr does not name {case.broken!r}", took
        return "ok", "exit 2 (usage error, on stderr)", took
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        why = p.stderr.decode("utf-8", "replace").strip()[-160:] or str(e)
        return "invalid-json", f"exit {p.returncode}: {why}", took
    if case.named and case.broken and cmd in ("doctor", "load") and not named_in(doc, case.broken):
        return "unnamed", f"exit {p.returncode}: no finding names {case.broken!r}", took
    return "ok", f"exit {p.returncode}", took


def start_helper(case):
    """For `which --pid`: a process that has mapped the case's library (else libm)."""
    code = ("import ctypes,sys,time\n"
            "try: ctypes.CDLL(sys.argv[1])\nexcept OSError: pass\n"
            "print('up', flush=True); time.sleep(600)")
    lib = case.which_lib or "libm.so.6"
    helper = subprocess.Popen([b"python3", b"-c", code.encode(), b(lib)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    helper.stdout.readline()
    return helper


def main():
    global TIME_LIMIT
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlenv", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true")
    mode.add_argument("--quick", action="store_true")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--jobs", type=int, default=4,
                    help="runs at once (most of a hang case's time is waiting)")
    ap.add_argument("--known-failures")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT,
                    help="seconds a run may take (default: %(default)s, the release bound; "
                         "an unoptimized sanitizer build needs more)")
    ap.add_argument("--keep")
    a = ap.parse_args()
    TIME_LIMIT = a.time_limit
    known = set()
    if a.known_failures:
        with open(a.known_failures) as f:
            known = {l.split("#")[0].strip() for l in f} - {""}
    work = a.keep or tempfile.mkdtemp(prefix="dlenv-hostile-")
    if a.keep:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    t_all = time.monotonic()
    counts = {"cases": 0, "runs": 0, "ok": 0, "crash": 0, "hang": 0, "bad-exit": 0,
              "invalid-json": 0, "unnamed": 0, "raw-escape": 0, "known": 0}
    unexpected = []
    fixed = []
    helpers = {}
    try:
        cases = build_quick_cases(work, a.cc) if a.quick else build_cases(work, a.cc, a.full)
        counts["cases"] = len(cases)
        jobs = []
        for case in cases:
            cmds = list(case.commands)
            if case.text:
                cmds += [c + "-text" for c in ("deps", "load") if c in case.commands]
            for cmd in cmds:
                if cmd == "inspect" and not case.inspect:
                    continue
                if cmd == "which" and id(case) not in helpers:
                    helpers[id(case)] = start_helper(case)
                jobs.append((case, cmd))

        def one(job):
            case, cmd = job
            helper = helpers.get(id(case))
            return run_one(a.dlenv, case, cmd, helper.pid if helper else 0)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for (case, cmd), (kind, detail, took) in zip(jobs, pool.map(one, jobs)):
                counts["runs"] += 1
                rid = f"{case.id} :: {cmd}"
                if kind == "ok":
                    counts["ok"] += 1
                    if rid in known:
                        fixed.append(rid)
                    mark = "ok  "
                elif rid in known:
                    counts["known"] += 1
                    mark = "KNOWN"
                else:
                    counts[kind] += 1
                    unexpected.append(f"{rid}: {kind}: {detail}")
                    mark = "FAIL"
                line = f"{mark} {kind:12s} {took:5.2f}s  {rid}  ({detail})"
                print(line.encode("ascii", "backslashreplace").decode(), flush=True)
    finally:
        for helper in helpers.values():
            helper.kill()
            helper.wait()
        for s in SOCKETS:
            s.close()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print("hostile suite: {cases} cases, {runs} runs: {ok} ok, {crash} crashes, {hang} hangs, "
          "{bad-exit} bad exits, {invalid-json} invalid JSON, {unnamed} broken files not named, "
          "{raw-escape} raw escapes in text, {known} known failures".format(**counts) +
          f"  ({time.monotonic() - t_all:.1f} s)")
    for f in fixed:
        print(f"fixed (listed as a known failure, now passes): {f}")
    if unexpected:
        print(f"{len(unexpected)} unexpected failures:")
        for u in unexpected:
            print("  " + u.encode("ascii", "backslashreplace").decode())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
