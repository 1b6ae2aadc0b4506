#!/usr/bin/env python3
"""Writes a wheel that carries dlenv's native binary as the `dlenv` command.

    scripts/make-wheel.py --binary build/dist/dlenv --version 0.1.0 \
        --platform manylinux_2_31_x86_64 --license LICENSE --readme README.md --out dist/

The binary goes in `dlenv-<ver>.data/scripts/` (as ruff's and uv's wheels carry theirs):
pip and uv copy it into the environment's bin/ (Scripts\\ on Windows) with its executable
bit, and no Python code of ours runs. The wheel is reproducible: entries sorted, every
timestamp SOURCE_DATE_EPOCH (default 1980-01-01), modes 0644 / 0755.
"""
import argparse
import base64
import hashlib
import os
import sys
import time
import zipfile


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the native dlenv (or dlenv.exe)")
    ap.add_argument("--version", required=True)
    ap.add_argument("--platform", required=True,
                    help="wheel platform tag: manylinux_2_31_x86_64, win_amd64")
    ap.add_argument("--license", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--out", required=True, help="directory for the .whl")
    a = ap.parse_args()

    name = "dlenv"
    tag = f"py3-none-{a.platform}"
    data_dir = f"{name}-{a.version}.data"
    info_dir = f"{name}-{a.version}.dist-info"
    exe = "dlenv.exe" if a.platform.startswith("win") else "dlenv"

    def read(path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            sys.exit(f"make-wheel: {path}: {e.strerror}")

    readme = read(a.readme).decode("utf-8")
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {a.version}",
        "Summary: Diagnose the NVIDIA driver -> CUDA -> cuDNN -> framework stack, "
        "natively, in milliseconds",
        "License: Apache-2.0",
        "Requires-Python: >=3.7",
        "Classifier: License :: OSI Approved :: Apache Software License",
        "Classifier: Environment :: Console",
        "Classifier: Environment :: GPU :: NVIDIA CUDA",
        "Classifier: Operating System :: POSIX :: Linux"
        if exe == "dlenv" else "Classifier: Operating System :: Microsoft :: Windows",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ]).encode("utf-8")
    wheel = "\n".join([
        "Wheel-Version: 1.0",
        "Generator: dlenv scripts/make-wheel.py",
        "Root-Is-Purelib: false",
        f"Tag: {tag}",
        "",
    ]).encode()

    entries = [
        (f"{data_dir}/scripts/{exe}", read(a.binary), 0o755),
        (f"{info_dir}/LICENSE", read(a.license), 0o644),
        (f"{info_dir}/METADATA", metadata, 0o644),
        (f"{info_dir}/WHEEL", wheel, 0o644),
    ]
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data, _ in entries)
    record += f"{info_dir}/RECORD,,\n"
    entries.append((f"{info_dir}/RECORD", record.encode(), 0o644))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, f"{name}-{a.version}-{tag}.whl")
    tmp = out + ".part"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path, data, mode in entries:  # RECORD last, as the wheel spec recommends
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix: pip reads the mode bits
            z.writestr(info, data)
    os.replace(tmp, out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
