#!/usr/bin/env bash
# ctest entry: tests/kubernetes/run-check.sh FILE.yaml... -> check-manifests.mjs, or exit 77
# (skipped) with the reason when Node.js or the validator's npm packages are missing
# (scripts/install-deps.sh --fleet installs both).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null; then
  echo "SKIP: node (Node.js) is not installed: scripts/install-deps.sh --fleet installs it"
  exit 77
fi
if [[ ! -d "$here/node_modules/kubernetes-models" || ! -d "$here/node_modules/yaml" ]]; then
  echo "SKIP: $here/node_modules lacks kubernetes-models/yaml: scripts/install-deps.sh --fleet runs npm ci there"
  exit 77
fi
exec node "$here/check-manifests.mjs" "$@"
