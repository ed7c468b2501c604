/** `salon <command>`: dispatches to src/cli/commands/<command>.ts. */
import { describeSettings } from '../config.js';
import { asksForHelp, unknownFlag, type Command } from './command.js';
import { printable } from './printable.js';

/** Every subcommand, loaded on demand so `salon extract` does not start a server. */
const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  serve: () => import('./commands/serve.js'),
  doctor: () => import('./commands/doctor.js'),
  extract: () => import('./commands/extract.js'),
  ingest: () => import('./commands/ingest.js'),
  search: () => import('./commands/search.js'),
  reindex: () => import('./commands/reindex.js'),
  import: () => import('./commands/import.js'),
  threads: () => import('./commands/threads.js'),
  sources: () => import('./commands/sources.js'),
};

async function help(): Promise<void> {
  const lines = ['usage: salon <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const c = (await load()).default;
    lines.push(`  ${c.usage.padEnd(44)} ${c.summary}`);
  }
  lines.push('', 'configuration (environment variables):');
  for (const s of describeSettings()) {
    const values = [s.default && `default ${s.default}`, s.accepts].filter(Boolean).join('; ');
    lines.push(`  ${s.name.padEnd(26)} ${s.description}${values ? ` [${values}]` : ''}`);
  }
  console.log(lines.join('\n'));
}

async function main(argv: string[]): Promise<number> {
  // `salon help import` is `salon import --help`.
  if (argv[0] === 'help' && argv.length === 2) return main([argv[1], '--help']);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await help();
    return name ? 0 : 1;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    console.error(`salon: unknown command "${name}"; see salon --help`);
    return 2;
  }
  const command = (await load()).default;
  // `salon threads --help` prints the command's usage, instead of refusing --help as an unknown option.
  if (asksForHelp(rest)) {
    console.log(`${command.help ?? `usage: salon ${command.usage}`}\n\n${command.summary}`);
    return 0;
  }
  // A mistyped option would otherwise be ignored, and the command run with its default.
  const unknown = unknownFlag(rest, command.flags);
  if (unknown) {
    console.error(`salon ${name}: unknown option ${unknown}\nusage: salon ${command.usage}`);
    return 2;
  }
  return command.run(rest);
}

/**
 * A reader that closed early (`salon search … | head -1`) ends what the command prints, not the
 * command: later lines are dropped, and the command finishes with its own exit code (an ingest
 * piped to `head` still stores every item). An unhandled EPIPE ended it with a stack trace, exit 1.
 * Stderr too (`salon ingest … 2>&1 | head -1`): the progress and summary lines go there, and an
 * EPIPE on them ended an ingest at its summary, before it told running servers of its items.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(`salon: ${printable(err instanceof Error ? err.message : String(err))}`);
    process.exitCode = 1;
  },
);
