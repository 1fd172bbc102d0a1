import type { Command } from 'commander';
import { z } from 'zod';
import { CapabilitySchema, TransportSchema } from '../../fleet/protocol.ts';
import { startFleetWorker } from '../../fleet/worker.ts';
import { stopRequested } from '../signals.ts';

const WorkerOptionsSchema = z.strictObject({
  redis: z.string().min(1),
  rig: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-" only'),
  capabilities: z.array(CapabilitySchema).min(1),
  transport: z.array(TransportSchema).min(1),
  voice: z.string().optional(),
  concurrency: z.coerce.number().int().min(1).max(64),
  lockSeconds: z.coerce.number().positive().max(3600),
});

const list = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

export function registerWorkerCommands(program: Command): void {
  program
    .command('worker')
    .description('serve fleet campaigns of every kind (icabench run --fleet) on this rig: take the planned items (conversations, questions, task trials) it can run from Redis and send back the results')
    .requiredOption('--redis <url>', 'the fleet Redis: redis://127.0.0.1:6379 on this machine, rediss://:PASSWORD@host:port on a lab network (docs/fleet.md)')
    .requiredOption('--rig <name>', 'this rig\'s name, shown in the run\'s progress and the bench app')
    .option('--capabilities <list>', 'what the rig can test: text,audio,vehicle,tools (audio = the voice rig, vehicle = a drive scenario feed, tools = tool-agent task trials)', 'text,vehicle')
    .option('--transport <list>', 'how its head unit is reached: reference (built in), bridge (a unit dials in to this machine), http', 'reference')
    .option('--voice <description>', 'the voice rig (speaker/microphone), with the audio capability')
    .option('--concurrency <n>', 'items at once', '2')
    .option('--lock-seconds <s>', 'an item whose worker stops for this long (killed, unplugged) goes back to the queue', '30')
    .action(async (raw: Record<string, string>) => {
      const parsed = WorkerOptionsSchema.safeParse({
        redis: raw.redis,
        rig: raw.rig,
        capabilities: list(raw.capabilities),
        transport: list(raw.transport),
        voice: raw.voice,
        concurrency: raw.concurrency,
        lockSeconds: raw.lockSeconds,
      });
      if (!parsed.success) throw new Error(`worker: ${parsed.error.issues.map((i) => `--${String(i.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}${i.path.length > 1 ? `[${i.path.slice(1).join('.')}]` : ''}: ${i.message}`).join('; ')}`);
      const options = parsed.data;
      if (options.capabilities.includes('audio') && !options.voice) throw new Error('worker: --capabilities audio needs --voice describing the voice rig (e.g. "booth-1 speaker+mic")');
      const worker = await startFleetWorker({
        redisUrl: options.redis,
        rig: options.rig,
        capabilities: options.capabilities,
        transports: options.transport,
        voice: options.voice ?? null,
        concurrency: options.concurrency,
        lockMs: Math.round(options.lockSeconds * 1000),
        log: (line) => console.error(line),
      });
      await stopRequested(`worker ${worker.id}: stopping; the running items finish first (quitting at once sends them back to the queue)`);
      await worker.close();
      console.error(`worker ${worker.id}: stopped`);
    });
}
