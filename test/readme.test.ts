import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/config.js';

describe('README', () => {
  const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
  it('lists every configuration variable', () => {
    for (const name of Object.keys(SETTINGS)) expect(readme, name).toContain(`| \`${name}\` |`);
  });
  it('states the two commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
