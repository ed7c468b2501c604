import type { Command } from '../command.js';

const serve: Command = {
  summary: 'start the server (same as npm start)',
  usage: 'serve',
  flags: [],
  async run() {
    await import('../../server.js');
    return new Promise<number>(() => {});
  },
};
export default serve;
