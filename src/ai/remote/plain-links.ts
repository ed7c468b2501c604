/**
 * A remote model's answer with its markdown links spelled out. The answer is rendered as markdown
 * under the assistant's name, and a model can be led by what it reads (a page, a comment, a
 * member's message) to offer `[the official box office](https://evil.example/login)`, or a link
 * whose address carries what the asker asked. `](` becomes `]\(`, which the client's renderer shows
 * as written, address and all, as the built-in model shows what it quotes (protocol/markdown-literal.ts).
 * Links are the only markup that leads elsewhere: raw HTML, images and autolinks are off.
 */

/** Escapes the `(` after every `]` in a streamed answer, piece by piece (a link may be cut between two). */
export class PlainLinks {
  private afterBracket = false;

  /** `piece` with its link openings escaped. */
  push(piece: string): string {
    if (!piece) return piece;
    let out = piece.includes('](') ? piece.replaceAll('](', ']\\(') : piece;
    if (this.afterBracket && out.startsWith('(')) out = `\\${out}`;
    this.afterBracket = piece.endsWith(']');
    return out;
  }
}
