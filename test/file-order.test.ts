import { describe, expect, it } from 'vitest';
import { bySize } from './file-order.js';

describe('test file order', () => {
  it('starts the largest files first, ties by path, whatever order they came in', () => {
    const sizes: Record<string, number> = { 'a.test.ts': 10, 'b.test.ts': 30, 'c.test.ts': 10, 'd.test.ts': 20 };
    const order = bySize(
      ['c.test.ts', 'a.test.ts', 'd.test.ts', 'b.test.ts'],
      (f) => f,
      (p) => sizes[p],
    );
    expect(order).toEqual(['b.test.ts', 'd.test.ts', 'a.test.ts', 'c.test.ts']);
  });
});
