#!/usr/bin/env bash
# Makes .device/vllm/: vLLM's own Triton kernels for the GDN causal conv and post-conv, taken unchanged
# from vLLM's wheel on PyPI, plus the few stand-in modules they import, so bench/vllm_reference.py can time
# them on a GPU machine that has torch and triton but no vLLM. Nothing of vLLM is committed here.
#
#   bash bench/pack-vllm.sh [VERSION]     (default: the newest vllm on PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-}
dest=.device/vllm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$work" "vllm${version:+==$version}"
wheel=$(ls "$work"/vllm-*.whl)
rm -rf "$dest" && mkdir -p "$dest"
unzip -q -o "$wheel" -d "$dest" \
  'vllm/model_executor/layers/mamba/ops/causal_conv1d.py' \
  'vllm/third_party/flash_linear_attention/ops/fused_gdn_prefill_post_conv.py'
basename "$wheel" > "$dest/VLLM_WHEEL"
# Stand-ins for the modules those two files import (only the names they use).
for d in vllm vllm/model_executor vllm/model_executor/layers vllm/model_executor/layers/mamba \
         vllm/model_executor/layers/mamba/ops vllm/third_party vllm/third_party/flash_linear_attention \
         vllm/third_party/flash_linear_attention/ops vllm/v1 vllm/v1/attention vllm/v1/attention/backends; do
  touch "$dest/$d/__init__.py" 2>/dev/null || { mkdir -p "$dest/$d"; touch "$dest/$d/__init__.py"; }
done
mkdir -p "$dest/vllm/triton_utils"
printf 'import triton\nimport triton.language as tl\n' > "$dest/vllm/triton_utils/__init__.py"
cat > "$dest/vllm/platforms.py" <<'PY'
class _Platform:
    def is_cpu(self):
        return False

    def is_arch_support_pdl(self):
        return False


current_platform = _Platform()
PY
# The values vLLM defines in vllm/v1/attention/backends/utils.py.
grep -E '^(PAD_SLOT_ID|NULL_BLOCK_ID) *=' <(unzip -p "$wheel" vllm/v1/attention/backends/utils.py) \
  > "$dest/vllm/v1/attention/backends/utils.py"
echo "packed $(cat "$dest/VLLM_WHEEL") kernels into $dest ($(du -sh "$dest" | cut -f1))"
