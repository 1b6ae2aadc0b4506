#!/usr/bin/env bash
# Builds a pip-style tree (torch/lib + nvidia/*/lib, $ORIGIN RPATHs) from this
# machine's CUDA toolkit, for timing `dlenv deps` where no PyTorch is installed.
# The CUDA/cuDNN files are hard links (copies where links fail), so the tree's
# files are real files, as in a wheel, and /usr/local/cuda's copies are shadowed.
# Usage: bench/fake_wheel_tree.sh [DEST] [CUDA_LIB_DIR]  (prints DEST's libtorch_cuda.so)
set -euo pipefail
dest=${1:-/tmp/dlenv-fake-venv}
cuda=${2:-/usr/local/cuda/lib64}
sp=$dest/lib/python3.12/site-packages
rm -rf "$dest"
mkdir -p "$sp/torch/lib" "$sp/nvidia/cudnn/lib" "$sp/nvidia/cu13/lib" "$sp/nvidia/nccl/lib"
place() {  # place FILE DIR: a hard link, else a copy
  ln "$(readlink -f "$1")" "$2/$(basename "$1")" 2>/dev/null || cp "$(readlink -f "$1")" "$2/$(basename "$1")"
}
for f in "$cuda"/libcudnn*.so.9; do place "$f" "$sp/nvidia/cudnn/lib"; done
for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcusparse.so.12 libcufft.so.12 \
  libcurand.so.10 libnvrtc.so.13 libnvJitLink.so.13 libcupti.so.13; do
  [[ -e $cuda/$n ]] && place "$cuda/$n" "$sp/nvidia/cu13/lib"
done
[[ -e $cuda/libnccl.so.2 ]] && place "$cuda/libnccl.so.2" "$sp/nvidia/nccl/lib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rpath='$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN'
echo 'int c10_cuda(void) { return 0; }' >"$work/c10.c"
gcc -shared -fPIC -o "$sp/torch/lib/libc10_cuda.so" -Wl,-soname,libc10_cuda.so "$work/c10.c"
echo 'int torch_cuda(void) { return 1; }' >"$work/t.c"
needed=(-L"$sp/torch/lib" -lc10_cuda)
for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcusparse.so.12 libcufft.so.12 \
  libcurand.so.10 libcupti.so.13; do
  [[ -e $sp/nvidia/cu13/lib/$n ]] && needed+=("-l:$n")
done
needed+=(-L"$sp/nvidia/cu13/lib" -L"$sp/nvidia/cudnn/lib" -l:libcudnn.so.9)
[[ -e $sp/nvidia/nccl/lib/libnccl.so.2 ]] && needed+=(-L"$sp/nvidia/nccl/lib" -l:libnccl.so.2)
gcc -shared -fPIC -o "$sp/torch/lib/libtorch_cuda.so" "$work/t.c" -Wl,--no-as-needed \
  -Wl,--disable-new-dtags -Wl,-rpath,"$rpath" "${needed[@]}" -lstdc++ -lm
echo "$sp/torch/lib/libtorch_cuda.so"
