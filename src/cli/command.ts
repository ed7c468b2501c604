/** What a `salon` subcommand module exports as default. */
export interface Command {
  /** One line for `salon --help`. */
  summary: string;
  /** Usage line, e.g. `extract FILE... [--url URL] --json`. */
  usage: string;
  /** The full usage, for a command with several forms (`salon threads --help`); default the usage line. */
  help?: string;
  /** The options it takes (`--name`), each named without its dashes: any other is refused before it runs. */
  flags: readonly string[];
  /** Runs the command; resolves to the process exit code. */
  run(args: string[]): Promise<number>;
}

/** A mistake in how a command was called: it prints the message with its usage and exits 2. */
export class UsageError extends Error {}

/**
 * The whole number `--name` was given (decimal digits only: `Number` would take `0x3`, `1e1` and
 * the `true` of a flag given no value, which is 1), or undefined when it was not given. Throws a
 * UsageError naming the option.
 */
export function wholeNumberOption(options: Map<string, string | true>, name: string, min: number, max: number): number | undefined {
  const value = options.get(name);
  if (value === undefined) return undefined;
  if (value === true) throw new UsageError(`--${name} needs a value, a whole number from ${min} to ${max}`);
  const n = /^\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** Whether `args` ask for the command's help (`--help` or `-h` before any `--`). */
export function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The first `--option` of `args` that `flags` does not name (before a `--`), or null. */
export function unknownFlag(args: string[], flags: readonly string[]): string | null {
  for (const a of args) {
    if (a === '--') return null;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    const name = a.slice(2, eq > 0 ? eq : undefined);
    if (!flags.includes(name)) return `--${name}`;
  }
  return null;
}

/** Splits argv into positionals and `--flag value` / `--flag` options. */
export function parseArgs(args: string[], booleanFlags: string[] = []): { positionals: string[]; options: Map<string, string | true> } {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) options.set(a.slice(2, eq), a.slice(eq + 1));
      else if (booleanFlags.includes(a.slice(2)) || i + 1 >= args.length || args[i + 1].startsWith('--')) options.set(a.slice(2), true);
      else options.set(a.slice(2), args[++i]);
    } else positionals.push(a);
  }
  return { positionals, options };
}
