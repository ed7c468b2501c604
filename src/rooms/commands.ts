/**
 * Slash commands typed in `say` (docs/protocol.md). `/ask` and `@ai` are handled by the hub; other
 * commands are registered here by the areas that own them (threads, memory) and answer the sender
 * alone with a `system` message. Until a command is registered, the sender gets the list of what is.
 */
import type { Member } from '../protocol/messages.js';

/** What a command handler is told. */
export interface CommandContext {
  roomId: string;
  threadId: string;
  user: Member;
  /** The sender's address key (src/rooms/address.ts): what per-address limits count. */
  address: string;
  /** Everything after the command name, trimmed. */
  args: string;
}

export interface SlashCommand {
  /** Lowercase name without the slash, e.g. `threads`. */
  name: string;
  /** e.g. `/thread new <title>` */
  usage: string;
  summary: string;
  /** The reply shown to the sender; a thrown SalonError becomes an `error` frame. */
  run(ctx: CommandContext): Promise<string>;
}

/** How a public `ask` frame's question reads in the room: `@ai <text>`. */
export const ASK_MARK = '@ai ';

const COMMAND = /^\/([a-z][a-z0-9-]*)(?:\s+([\s\S]*))?$/i;
const ASK_PREFIX = /^(?:@ai|\/ask)(?:\s+|$)/i;

/** The question of an `@ai …` or `/ask …` message (possibly empty), or null when it is not one. */
export function askQuestion(text: string): string | null {
  const m = ASK_PREFIX.exec(text.trimStart());
  return m ? text.trimStart().slice(m[0].length).trim() : null;
}

/** `{name, args}` of a `/command …` message, or null when the text is not a command. */
export function parseCommand(text: string): { name: string; args: string } | null {
  const m = COMMAND.exec(text.trim());
  return m ? { name: m[1].toLowerCase(), args: (m[2] ?? '').trim() } : null;
}

/** Registered slash commands. */
export class CommandRegistry {
  private readonly commands = new Map<string, SlashCommand>();

  /** Adds a command; a second command with the same name is a programming error. */
  register(command: SlashCommand): void {
    if (!/^[a-z][a-z0-9-]*$/.test(command.name)) throw new TypeError(`SlashCommand name: expected lowercase letters, got "${command.name}"`);
    if (command.name === 'ask' || this.commands.has(command.name)) throw new TypeError(`SlashCommand name: /${command.name} is already taken`);
    this.commands.set(command.name, command);
  }

  get(name: string): SlashCommand | undefined {
    return this.commands.get(name);
  }

  /** The text of the help reply. */
  help(unknown?: string): string {
    const lines = [
      ...(unknown ? [`Unknown command /${unknown}.`] : []),
      'Available commands:',
      '/ask <question> (or @ai <question>): ask the assistant; everyone sees the answer',
      ...[...this.commands.values()].map((c) => `${c.usage}: ${c.summary}`),
      '/help: this list',
    ];
    return lines.join('\n');
  }
}
