import { z } from 'zod';

/**
 * The whole renderer ⇄ main surface of the Electron shell. Every message in either direction is
 * checked against these schemas (preload before sending, main on receipt, preload on the reply).
 */
export const IPC_CHANNELS = {
  appInfo: 'icabench:app-info',
  openExternal: 'icabench:open-external',
  revealWorkspace: 'icabench:reveal-workspace',
} as const;
export type IpcChannel = (typeof IPC_CHANNELS)[keyof typeof IPC_CHANNELS];

export const NoArgsSchema = z.tuple([]);

/** Only web documentation links leave the app; no file:, javascript: or custom schemes. */
export const OpenExternalArgsSchema = z.tuple([
  z
    .string()
    .max(2048)
    .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'expected an http(s) URL'),
]);

export const AppInfoSchema = z.object({
  version: z.string(),
  platform: z.string(),
  serverUrl: z.string(),
  workspace: z.string(),
});
export type AppInfo = z.infer<typeof AppInfoSchema>;

export const OkSchema = z.object({ ok: z.boolean(), error: z.string().optional() });
export type Ok = z.infer<typeof OkSchema>;

export const IPC_CONTRACT = {
  [IPC_CHANNELS.appInfo]: { args: NoArgsSchema, reply: AppInfoSchema },
  [IPC_CHANNELS.openExternal]: { args: OpenExternalArgsSchema, reply: OkSchema },
  [IPC_CHANNELS.revealWorkspace]: { args: NoArgsSchema, reply: OkSchema },
} as const;

/** The API the preload exposes to the page as window.icabench. */
export interface IcabenchDesktopApi {
  appInfo(): Promise<AppInfo>;
  openExternal(url: string): Promise<Ok>;
  revealWorkspace(): Promise<Ok>;
}
