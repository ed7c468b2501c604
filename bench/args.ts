/**
 * The command lines of the benchmarks and evaluations. Every flag must be one the benchmark knows
 * (a misspelt flag used to be ignored, and the default benchmark ran and printed its figures as if
 * they answered the question asked), every value is checked before any work starts, `--help`
 * prints the usage, and a refused command line stops with the flag's name, the usage and exit
 * code 2 rather than a stack trace.
 */
import { parseArgs } from 'node:util';

/** The flags a benchmark takes: `--name value` (`'string'`) or a bare `--name` (`'boolean'`). */
export type BenchFlags = Record<string, 'string' | 'boolean'>;

/** Why a command line was refused; the message names the flag. */
export class BenchUsageError extends Error {
  override name = 'BenchUsageError';
}

/** Typed reads of a parsed command line; each throws BenchUsageError for a value it cannot use. */
export interface BenchArgs {
  /** A string flag's value, or `fallback` when it was not given. */
  text(name: string): string | undefined;
  text(name: string, fallback: string): string;
  /** A string flag that must be given. */
  required(name: string): string;
  /** Whether a boolean flag was given. */
  flag(name: string): boolean;
  /** A number flag's value (or `fallback`), refused when not finite, not whole with `integer`, or outside [min, max]. */
  number(name: string, fallback: number, range?: { min?: number; max?: number; integer?: boolean }): number;
  /** A number flag's value, or undefined when it was not given; checked as `number` checks it. */
  optionalNumber(name: string, range?: { min?: number; max?: number; integer?: boolean }): number | undefined;
  /** One of `choices` (or `fallback`). */
  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T;
}

/**
 * Parses `argv` against `flags`; `help` is true when `--help` or `-h` was given (the rest is then
 * not read). Unknown flags, positionals, a string flag without its value and a value given to a
 * boolean flag throw BenchUsageError.
 */
export function parseBenchArgs(flags: BenchFlags, argv: string[]): { help: boolean; args: BenchArgs } {
  if (argv.includes('--help') || argv.includes('-h')) return { help: true, args: readerOf(flags, {}) };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(flags).map(([name, type]) => [name, { type }])),
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new BenchUsageError((err as Error).message);
  }
  return { help: false, args: readerOf(flags, values) };
}

function readerOf(flags: BenchFlags, values: Record<string, string | boolean | undefined>): BenchArgs {
  const declared = (name: string, type: 'string' | 'boolean') => {
    // A benchmark reading a flag it did not declare is its own bug, not the user's.
    if (flags[name] !== type) throw new Error(`bench/args: --${name} is not a declared ${type} flag`);
  };
  const rawText = (name: string): string | undefined => {
    declared(name, 'string');
    return values[name] as string | undefined;
  };
  const checked = (name: string, raw: string, range: { min?: number; max?: number; integer?: boolean } = {}): number => {
    const value = raw.trim() === '' ? NaN : Number(raw);
    const { min, max, integer } = range;
    const bad = !Number.isFinite(value) || (integer && !Number.isInteger(value)) || (min !== undefined && value < min) || (max !== undefined && value > max);
    if (bad) {
      const kind = integer ? 'a whole number' : 'a number';
      const bounds = [min !== undefined ? `≥ ${min}` : '', max !== undefined ? `≤ ${max}` : ''].filter(Boolean).join(' and ');
      throw new BenchUsageError(`--${name}: expected ${kind}${bounds ? ' ' + bounds : ''}, got ${JSON.stringify(raw)}`);
    }
    return value;
  };
  function text(name: string): string | undefined;
  function text(name: string, fallback: string): string;
  function text(name: string, fallback?: string): string | undefined {
    return rawText(name) ?? fallback;
  }
  return {
    text,
    required(name) {
      const raw = rawText(name);
      if (raw === undefined) throw new BenchUsageError(`--${name} is required`);
      return raw;
    },
    flag(name) {
      declared(name, 'boolean');
      return values[name] === true;
    },
    number(name, fallback, range) {
      const raw = rawText(name);
      return raw === undefined ? fallback : checked(name, raw, range);
    },
    optionalNumber(name, range) {
      const raw = rawText(name);
      return raw === undefined ? undefined : checked(name, raw, range);
    },
    choice(name, choices, fallback) {
      const raw = rawText(name);
      if (raw === undefined) return fallback;
      const found = choices.find((c) => c === raw);
      if (found === undefined) throw new BenchUsageError(`--${name}: expected ${choices.join(' or ')}, got ${JSON.stringify(raw)}`);
      return found;
    },
  };
}

/**
 * A benchmark's options: `read` turns the parsed command line into them. `--help` prints `usage`
 * and exits 0; a refused command line (BenchUsageError, from parsing or from `read`) prints the
 * reason and `usage` on stderr and exits 2, before the benchmark has done any work.
 */
export function benchOptions<T>(usage: string, flags: BenchFlags, read: (args: BenchArgs) => T, argv: string[] = process.argv.slice(2)): T {
  try {
    const { help, args } = parseBenchArgs(flags, argv);
    if (help) {
      process.stdout.write(`usage: ${usage.trim()}\n`);
      process.exit(0);
    }
    return read(args);
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err;
    process.stderr.write(`${err.message}\nusage: ${usage.trim()}\n`);
    process.exit(2);
  }
}

/**
 * Runs a benchmark's `main` and ends the process: with the exit code `main` resolves to (0 when
 * none), or 1 with the error printed when it rejects. Exiting does not wait for pools, timers or
 * sockets a failed run left open.
 */
export function runBench(main: () => Promise<number | void>): void {
  main().then(
    (code) => process.exit(code ?? 0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
