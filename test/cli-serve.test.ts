/** `salon serve` refusing to start where it cannot listen: the setting to fix, exit code 2. Needs the build. */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { salon, tempDir } from './helpers.js';

describe('salon serve', () => {
  it('names PORT, with exit code 2, when another process holds the port', async () => {
    const data = tempDir('salon-port-');
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as AddressInfo).port;
      const run = await salon(['serve'], { DATA_DIR: data.dir, HOST: '127.0.0.1', PORT: String(port), SEARCH_WORKERS: '1' });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^salon: bad configuration: PORT: port ${port} on 127\\.0\\.0\\.1 is in use \\(EADDRINUSE\\)`, 'm'));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
      data.cleanup();
    }
  }, 60_000);
});
