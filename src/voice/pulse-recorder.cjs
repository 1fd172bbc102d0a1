// A node-record-lpcm16 recorder module (its `recorder` option takes this file's absolute path):
// records raw 16-bit PCM from one PulseAudio/PipeWire source with pacat (Debian: pulseaudio-utils).
// Loaded with require() by node-record-lpcm16, hence CommonJS.
module.exports = (options) => ({
  cmd: 'pacat',
  args: [
    '--record',
    `--device=${options.device}`,
    '--raw',
    '--format=s16le',
    `--rate=${options.sampleRate}`,
    `--channels=${options.channels}`,
    '--latency-msec=20',
  ],
  spawnOptions: { env: options.env ?? process.env },
});
