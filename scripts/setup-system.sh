#!/usr/bin/env bash
# Installs the Debian packages icabench needs (run once per machine; .ci/run calls it).
# Idempotent: packages already present are skipped without touching apt.
#   espeak-ng            speech synthesis for the simulated driver and the reference head unit's voice
#   pocketsphinx         offline speech recognition (pocketsphinx_continuous)
#   pocketsphinx-en-us   its US English acoustic model and CMU pronunciation dictionary
#   sox                  microphone recording through node-record-lpcm16 (sox/rec), audio conversion
# Packages other areas need (they add theirs to EXTRA_PACKAGES, one word each):
#   can-utils            candump/cansend for the CAN vehicle context (docs/vehicle.md, icabench doctor)
#   socat                pseudo-terminal pairs for the SLCAN transport tests (test/vehicle)
#   chromium             the browser the bench app's end-to-end tests drive (docs/bench-app.md)
#   redis-server         the queue of fleet campaigns (icabench worker, run --fleet; docs/fleet.md, test/fleet)
#   xvfb                 a virtual display for the test of `icabench app`'s Chromium window (test/e2e/app-window.test.ts)
set -euo pipefail

PACKAGES=(espeak-ng pocketsphinx pocketsphinx-en-us sox)
EXTRA_PACKAGES=(can-utils socat chromium redis-server xvfb)

missing=()
for pkg in "${PACKAGES[@]}" "${EXTRA_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system: all ${#PACKAGES[@]} + ${#EXTRA_PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup-system: need root to install: ${missing[*]} (run as root or install sudo)" >&2
    exit 1
  fi
fi

echo "setup-system: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# another apt process (unattended upgrades, a parallel job) may hold the lock for a while
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-system: done"
