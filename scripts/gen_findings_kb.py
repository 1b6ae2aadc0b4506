#!/usr/bin/env python3
"""Refresh kb/findings.json from the failure catalog (failures.md).

Usage: scripts/gen_findings_kb.py [CATALOG] [OUT]
  CATALOG defaults to ../shared/reference/failures.md (next to the repo),
  OUT defaults to kb/findings.json in the repo.

Every "### X1. `id`" entry becomes one finding. Fields:
  id, section, title (one line, written by us: TITLES below), confidence ("" or the
  catalog's "lower"/"medium"), platforms, error_text (verbatim signatures: each line of the
  fenced blocks, plus backticked messages in the prose), error_note (the prose around them),
  cause, signals[], fix[] (split at top-level ';'), sources[] (URLs).
Python 3 standard library only. Fails if an entry lacks a title or a required field, or if
TITLES names an id the catalog does not have.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# One-line summaries, ours (the catalog's headings are bare ids).
TITLES = {
    "win-tf-cudnn64-dll-not-found": "cuDNN DLL (cudnn64_<major>.dll) not on the DLL search path, or the wrong cuDNN major",
    "win-tf-cudart-wrong-cuda-major": "The framework's CUDA runtime DLL (cudart64_<ver>.dll) is missing: wrong or no CUDA toolkit on PATH",
    "win-cudnn8-sublibrary-missing": "cuDNN 8 sub-library DLLs (cudnn_*_infer64_8.dll ...) missing or their dependencies unresolved",
    "win-zlibwapi-missing": "zlibwapi.dll, needed by cuDNN 8.3+ on Windows, is not installed",
    "win-dll-wrong-bitness-193": "A 32-bit or corrupt DLL with the right name is found first (error 193)",
    "win-cudnn-mixed-versions-127": "cuDNN DLLs from different releases are mixed (error 127)",
    "win-py38-path-not-searched": "Python >= 3.8 no longer searches PATH for extension DLL dependencies",
    "win-torch-dll-dependency-126": "A torch DLL exists but one of its own dependencies cannot be loaded (WinError 126)",
    "win-torch-fbgemm-libomp140": "torch >= 2.4 fbgemm.dll needs libomp140.x86_64.dll, which is missing",
    "win-torch-c10-dll-init-1114": "torch DLL initialisation fails (WinError 1114): MSVC runtime missing or too old",
    "win-vcredist-not-detected-warning": "torch cannot find the Microsoft Visual C++ runtime, or finds conflicting copies",
    "win-tf-gpu-after-2.10": "TensorFlow >= 2.11 has no GPU support on native Windows",
    "win-cuda-path-confusion": "Several CUDA toolkits: CUDA_PATH and PATH point at the wrong one",
    "win-32bit-python-no-torch": "No torch wheel for this Python (32-bit or unsupported version)",
    "win-install-path-special-chars": "Special or non-ASCII characters in the install path break DLL loading",
    "win-duplicate-openmp-runtime": "Two OpenMP runtimes (libiomp5md.dll) loaded in one process",
    "win-cudnn9-required-by-ctranslate2": "CTranslate2 >= 4.5 needs cuDNN 9 but only cuDNN 8 is present",
    "win-paddle-third-party-dso": "PaddlePaddle on Windows cannot load CUDA/cuDNN DLLs from PATH",
    "nvml-driver-library-mismatch": "NVIDIA user-space driver libraries and the loaded kernel module differ in version",
    "driver-module-not-built-for-kernel": "No NVIDIA kernel module built for the running kernel",
    "secure-boot-blocks-unsigned-module": "Secure Boot refuses the unsigned NVIDIA kernel module",
    "nouveau-or-nova-owns-gpu": "The GPU is bound to nouveau/nova_core instead of the NVIDIA driver",
    "cuda-driver-insufficient": "The CUDA runtime is newer than the installed driver supports",
    "torch-driver-too-old": "PyTorch reports the NVIDIA driver is too old for its CUDA build",
    "libcuda-stub-loaded": "The link-time stub libcuda.so is loaded instead of the driver's",
    "cuda-unknown-error-uvm": "CUDA unknown error (999): the nvidia_uvm module is missing or in a bad state",
    "dev-nvidia-permissions": "No permission to open /dev/nvidia* device nodes",
    "cuda-visible-devices-hides-gpu": "CUDA_VISIBLE_DEVICES hides every GPU",
    "fabric-manager-missing-802": "NVSwitch system without a matching nvidia-fabricmanager (error 802)",
    "forward-compat-unsupported-804": "CUDA forward-compatibility package used on an unsupported GPU (error 804)",
    "exclusive-compute-mode-busy": "GPU in exclusive compute mode is already used by another process",
    "gpu-fallen-off-bus-xid79": "The GPU fell off the bus (Xid 79): hardware or platform fault",
    "glibc-too-old-for-wheel": "The system glibc is older than the wheel's manylinux baseline",
    "libcudnn8-not-found": "libcudnn.so.8 not found: the consumer expects cuDNN 8 but it is absent",
    "pip-cudnn-vs-system-cudnn-symbols": "cuDNN sub-libraries from a pip wheel and from the system are mixed (undefined symbols)",
    "torch-cudnn-runtime-older-than-build": "The cuDNN loaded at run time is older than the one torch was built with",
    "cudnn-header-library-mismatch": "cuDNN headers and library come from different versions at build time",
    "nvjitlink-older-than-cusparse": "libnvJitLink.so.12 older than libcusparse.so.12 (undefined __nvJitLink* symbol)",
    "cudnn-status-not-initialized": "CUDNN_STATUS_NOT_INITIALIZED: cuDNN handle creation failed, usually out of GPU memory",
    "cublas-status-not-initialized": "CUBLAS_STATUS_NOT_INITIALIZED: cuBLAS handle creation failed, usually out of GPU memory",
    "cudnn-execution-failed-old-cuda-on-new-gpu": "CUDNN_STATUS_EXECUTION_FAILED: CUDA/cuDNN build too old for the GPU architecture",
    "cublas-gemm-invalid-value-mismatch": "CUBLAS_STATUS_INVALID_VALUE in GEMM: cuBLAS does not match the torch build",
    "no-kernel-image-new-gpu": "The framework build has no kernels for this (new) GPU architecture",
    "gpu-too-old-for-wheel": "The GPU is older than the oldest architecture the wheel supports",
    "torch-cpu-build-installed": "A CPU-only PyTorch build is installed",
    "tf-cannot-dlopen-gpu-libraries": "TensorFlow cannot dlopen one of its CUDA/cuDNN libraries and skips the GPU",
    "tf-could-not-find-cuda-drivers": "TensorFlow cannot find the CUDA libraries and runs on CPU",
    "tf-trt-not-found": "TF-TRT warning: TensorRT not found",
    "tf-cudnn-failed-to-initialize": "TensorFlow: cuDNN failed to initialise, usually GPU memory already taken",
    "tf-ptx-jit-new-arch": "TensorFlow lacks SASS for the GPU and JIT-compiles PTX at start-up",
    "xla-libdevice-ptxas-not-found": "XLA cannot find libdevice or ptxas from a CUDA toolkit",
    "jax-cudnn-version-mismatch": "JAX loads an older cuDNN than jaxlib was built with",
    "jax-ld-library-path-overrides-wheels": "LD_LIBRARY_PATH makes JAX load system CUDA libraries instead of its pip wheels",
    "jax-cpu-only-jaxlib": "CPU-only jaxlib installed (no CUDA plugin)",
    "paddle-cannot-load-cudnn": "PaddlePaddle cannot load the cuDNN shared library, or its version differs",
    "paddle-cpu-package-installed": "CPU paddlepaddle installed instead of, or next to, paddlepaddle-gpu",
    "ort-cuda-provider-load-failure": "ONNX Runtime CUDA execution provider fails to load its CUDA/cuDNN dependencies",
    "ort-cpu-and-gpu-packages-coexist": "onnxruntime and onnxruntime-gpu installed together",
    "ctranslate2-cudnn8-vs-9": "CTranslate2 needs a different cuDNN major than the one present",
    "cupy-multiple-packages": "Several CuPy packages installed in one environment",
    "cupy-cuda-major-mismatch": "The CuPy wheel's CUDA major has no matching runtime or driver",
    "tensorflow-gpu-package-removed": "tensorflow-gpu is an empty package since Dec 2022",
    "nvcc-vs-nvidia-smi-version-confusion": "nvidia-smi and nvcc show different CUDA versions (driver vs toolkit)",
    "cuda-home-not-set": "Building a CUDA extension: no CUDA toolkit (CUDA_HOME / nvcc) found",
    "toolkit-vs-torch-cuda-mismatch": "The nvcc toolkit's CUDA version differs from torch's CUDA build",
    "nvcc-unsupported-gpu-arch": "nvcc does not know the requested GPU architecture",
    "nvcc-unsupported-host-compiler": "The host compiler is newer than the CUDA toolkit supports",
    "prebuilt-extension-abi-mismatch": "A prebuilt extension was built for a different torch/CUDA/ABI",
    "docker-no-gpu-runtime": "Docker --gpus without a configured NVIDIA Container Toolkit",
    "container-started-without-gpus": "Container started without GPU access (--gpus missing)",
    "container-toolkit-cannot-find-nvml": "NVIDIA Container Toolkit cannot find the host driver's NVML",
    "container-image-needs-newer-driver": "The container image requires a newer CUDA than the host driver supports",
    "container-loses-gpu-after-daemon-reload": "Running containers lose GPU access after systemctl daemon-reload",
    "container-shm-too-small": "Container /dev/shm too small for data-loader workers",
    "wsl-linux-driver-installed-inside": "A Linux NVIDIA driver installed inside WSL2 breaks GPU access",
    "wsl-libcuda-not-symlink-warning": "WSL2: ldconfig warns libcuda.so.1 is not a symbolic link",
    "wsl-unversioned-libcuda-not-found": "WSL2: unversioned libcuda.so not found by dlopen",
    "wsl-gpu-access-blocked": "WSL2 cannot reach the GPU (TCC mode, policy or old Windows build)",
    "wsl1-has-no-gpu": "WSL1 has no GPU support",
    "conda-solver-picked-cpu-pytorch": "conda resolved a CPU-only PyTorch build",
    "conda-cuda-virtual-package-missing": "conda's __cuda virtual package is missing, so CUDA builds are not chosen",
    "conda-cudatoolkit-vs-system-cuda": "The conda env's CUDA toolkit differs from the system CUDA",
    "pip-replaced-cuda-torch-with-pypi-build": "pip replaced the CUDA torch build with the default PyPI build",
}

HEAD_RE = re.compile(r"^### ([A-Z][0-9]+)\. `([^`]+)`\s*(?:\((\w+) confidence\))?\s*$")
SECTION_RE = re.compile(r"^## ([A-Z])\. (.+?)\s*$")
FIELD_RE = re.compile(r"^- \*\*([^*]+?)(?: \(examples\))?:\*\*\s?(.*)$")
URL_RE = re.compile(r"https?://[^\s,;)`>]+")
FIELDS = {"Platforms": "platforms", "Error text": "error_text", "Root cause": "cause",
          "Signals": "signals", "Fix": "fix", "Sources": "sources"}


def split_top(text, sep=";"):
    """Split at `sep` outside parentheses, brackets and backticks."""
    parts, cur, depth, tick = [], [], 0, False
    for ch in text:
        if ch == "`":
            tick = not tick
        elif not tick and ch in "([":
            depth += 1
        elif not tick and ch in ")]" and depth:
            depth -= 1
        if ch == sep and depth == 0 and not tick:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip().rstrip(".").strip() for p in parts if p.strip()]


def join_prose(lines):
    return re.sub(r"\s+", " ", " ".join(l.strip() for l in lines)).strip()


def parse_error(lines):
    """lines: the raw lines of the Error text field (first line = text after the label)."""
    sigs, prose, in_fence = [], [], False
    for raw in lines:
        stripped = raw.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            if stripped:
                sigs.append(stripped)
            continue
        if stripped:
            prose.append(stripped)
    note = join_prose(prose)
    # backticked messages in the prose: spans with a space, long enough to be a message
    for span in re.findall(r"`([^`]+)`", note):
        if " " in span and len(span) >= 16 and span not in sigs:
            sigs.append(span)
    return sigs, note


def parse(path):
    text = open(path, encoding="utf-8").read()
    out, cur, section, field = [], None, "", None
    for line in text.splitlines():
        m = SECTION_RE.match(line)
        if m:
            section = f"{m.group(1)}. {m.group(2)}"
            cur = None
            continue
        if line.startswith("## "):
            section, cur = "", None
            continue
        m = HEAD_RE.match(line)
        if m:
            cur = {"key": m.group(1), "id": m.group(2), "confidence": m.group(3) or "",
                   "section": section, "raw": {}}
            out.append(cur)
            field = None
            continue
        if line.startswith("### "):
            raise SystemExit(f"unparsed heading: {line}")
        if cur is None:
            continue
        if line.strip() == "---":
            cur, field = None, None
            continue
        m = FIELD_RE.match(line)
        if m and m.group(1) in FIELDS:
            field = FIELDS[m.group(1)]
            cur["raw"][field] = [m.group(2)]
            continue
        if field:
            cur["raw"][field].append(line)
    return out


def build(entries):
    findings = []
    for e in entries:
        raw = e["raw"]
        for f in FIELDS.values():
            if f not in raw:
                raise SystemExit(f"{e['id']}: missing field {f}")
        if e["id"] not in TITLES:
            raise SystemExit(f"{e['id']}: no title in TITLES")
        sigs, note = parse_error(raw["error_text"])
        sources = []
        for u in URL_RE.findall(join_prose(raw["sources"])):
            u = u.rstrip(".")
            if u not in sources:
                sources.append(u)
        findings.append({
            "id": e["id"],
            "catalog_key": e["key"],
            "section": e["section"],
            "title": TITLES[e["id"]],
            "confidence": e["confidence"],
            "platforms": join_prose(raw["platforms"]).rstrip("."),
            "error_text": sigs,
            "error_note": note,
            "cause": join_prose(raw["cause"]),
            "signals": split_top(join_prose(raw["signals"])),
            "fix": split_top(join_prose(raw["fix"])),
            "sources": sources,
        })
    extra = set(TITLES) - {f["id"] for f in findings}
    if extra:
        raise SystemExit(f"TITLES has ids not in the catalog: {sorted(extra)}")
    return findings


# Fields the project adds to a catalog entry (kept when the catalog is refreshed).
PROJECT_FIELDS = ("severity", "layer", "plan_framework", "supersedes", "signatures")

DESCRIPTION = (
    "The catalog of every finding dlenv reports, one entry per failure mode: the entries with a "
    "catalog_key are the failure catalog's (failures.md, refreshed by scripts/gen_findings_kb.py), "
    "those without are dlenv's own checks (written here). severity is the highest a check reports, "
    "layer where it is shown, plan_framework the framework whose build `dlenv plan` chooses to fix it, supersedes the ids a finding of this id makes redundant for the same subject (the resolver drops them: one finding per cause), signatures lower-case pieces of an error text that name this failure (the longest one found in a text wins; dlenv doctor --deep matches a framework's import error with them); cmake/gen_finding_catalog.cmake makes the FindingId enum of "
    "kb/finding_catalog.h from this file, so a check can name no id this file lacks. error_text "
    "holds verbatim error signatures; title is ours.")


def main():
    catalog = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared", "reference", "failures.md")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "kb", "findings.json")
    findings = build(parse(catalog))
    # What the project adds to the catalog is kept: each entry's severity and layer, and
    # dlenv's own entries (no catalog_key), in their order after the catalog's.
    try:
        with open(out, encoding="utf-8") as fh:
            previous = json.load(fh)["findings"]
    except FileNotFoundError:
        previous = []
    kept = {f["id"]: f for f in previous}
    for f in findings:
        old = kept.get(f["id"])
        if not old or "severity" not in old:
            sys.exit(f"{f['id']}: new in the catalog: give it a severity and a layer in {out}")
        for key in PROJECT_FIELDS:
            if key in old:
                f[key] = old[key]
    catalog_ids = {f["id"] for f in findings}
    findings += [f for f in previous if not f.get("catalog_key") and f["id"] not in catalog_ids]
    doc = {"schema": 1, "description": DESCRIPTION, "findings": findings}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    print(f"{out}: {len(findings)} findings")


if __name__ == "__main__":
    main()
