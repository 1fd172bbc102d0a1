import { contextBridge, ipcRenderer } from 'electron';
import { IPC_CHANNELS, IPC_CONTRACT, type IcabenchDesktopApi, type IpcChannel } from './ipc.ts';

/** Checks the arguments before they leave the page and the reply before the page sees it. */
async function call(channel: IpcChannel, args: unknown[]): Promise<unknown> {
  const contract = IPC_CONTRACT[channel];
  const checkedArgs = contract.args.safeParse(args);
  if (!checkedArgs.success) throw new Error(`${channel}: invalid arguments: ${checkedArgs.error.issues.map((i) => i.message).join('; ')}`);
  const reply = await ipcRenderer.invoke(channel, ...checkedArgs.data);
  const checkedReply = contract.reply.safeParse(reply);
  if (!checkedReply.success) throw new Error(`${channel}: unexpected reply from the shell`);
  return checkedReply.data;
}

/** Narrow by design: three functions, no ipcRenderer, no Node objects cross into the page. */
export const desktopApi: IcabenchDesktopApi = {
  appInfo: () => call(IPC_CHANNELS.appInfo, []) as ReturnType<IcabenchDesktopApi['appInfo']>,
  openExternal: (url: string) => call(IPC_CHANNELS.openExternal, [url]) as ReturnType<IcabenchDesktopApi['openExternal']>,
  revealWorkspace: () => call(IPC_CHANNELS.revealWorkspace, []) as ReturnType<IcabenchDesktopApi['revealWorkspace']>,
};

contextBridge.exposeInMainWorld('icabench', desktopApi);
