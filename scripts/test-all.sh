#!/usr/bin/env bash
# `npm test`: the type check, the unit tests and the browser tests. Every stage runs even when an
# earlier one failed, so one run shows every failure; the exit code is non-zero if any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."

declare -a names=() results=()
stage() {
  local name=$1; shift
  echo "── $name: $*"
  "$@"
  local status=$?
  names+=("$name"); results+=("$status")
}

stage typecheck npx tsc -p tsconfig.json --noEmit
stage unit npx vitest run
stage browser npm run --silent test:e2e

failed=0
echo "── npm test summary"
for i in "${!names[@]}"; do
  if [ "${results[$i]}" -eq 0 ]; then echo "  ${names[$i]}: passed"; else echo "  ${names[$i]}: FAILED (exit ${results[$i]})"; failed=1; fi
done
exit $failed
