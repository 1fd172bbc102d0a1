#!/usr/bin/env bash
# A virtual sound card for the acoustic link without hardware: a user-space PulseAudio daemon with two
# null sinks, bench_out (the bench's loudspeaker; the unit's microphone is its monitor) and unit_out
# (the unit's loudspeaker; the bench's microphone is its monitor). bench-configs/voice-acoustic.yaml
# uses these names. Needs pulseaudio and pulseaudio-utils (scripts/setup-system.sh installs them).
#   bash scripts/virtual-audio.sh start   # then: icabench voice devices; icabench run bench-configs/voice-acoustic.yaml
#   bash scripts/virtual-audio.sh stop
set -euo pipefail
case "${1:-}" in
  start)
    pulseaudio --check 2>/dev/null && { echo "virtual-audio: a PulseAudio daemon is already running"; pactl list short sinks; exit 0; }
    pulseaudio --daemonize=yes --exit-idle-time=-1 -n --load=module-native-protocol-unix \
      --load="module-null-sink sink_name=bench_out" --load="module-null-sink sink_name=unit_out" --log-level=error
    # synthetic speech peaks near full scale and the sound server's resampling overshoots it: at 100 % a reply
    # reaches 32767 on the monitor (a clipping rig fault); 70 % (about -9 dB) leaves headroom and plenty of level
    pactl set-sink-volume bench_out 70% && pactl set-sink-volume unit_out 70%
    echo "virtual-audio: sinks bench_out, unit_out (volume 70 %); sources bench_out.monitor, unit_out.monitor"
    ;;
  stop) pulseaudio --kill && echo "virtual-audio: stopped" ;;
  *) echo "usage: bash scripts/virtual-audio.sh start|stop" >&2; exit 2 ;;
esac
