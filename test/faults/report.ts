/** The faults suite's one table: rows of (area, what, figure), printed when the suite ends. */
export class FaultsReport {
  private readonly rows: [string, string, string][] = [];

  add(area: string, what: string, figure: string): void {
    this.rows.push([area, what, figure]);
  }

  /** Prints the table as markdown, ready for a session note. */
  print(): void {
    const lines = [
      '',
      '| faults | what | figure |',
      '| --- | --- | --- |',
      ...this.rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`),
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }
}
