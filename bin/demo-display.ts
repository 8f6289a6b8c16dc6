/** Where the demo writes: a terminal gets a live progress line, anything else plain lines. */
interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** One look at the hops. */
export interface HopProgress {
  hop: number;
  hops: number;
  /** Seconds until the next hop is due; absent when none is left. */
  dueInSeconds?: number | undefined;
  /** What the recipient holds now, formatted. */
  recipient: string;
}

/**
 * The demo's output. On a terminal the hops' progress is one line rewritten in place (carriage
 * return and erase-line, nothing else); piped, no control code is written: a progress line is
 * printed only when a hop completes.
 */
export function createDisplay(output: Output) {
  const live = output.isTTY === true;
  let progressShown = false;
  let lastHop = -1;

  const line = (text: string) => {
    if (live && progressShown) {
      output.write('\r\x1b[2K');
      progressShown = false;
    }
    output.write(`${text}\n`);
  };

  return {
    heading(text: string) {
      line('');
      line(text);
    },
    field(label: string, value: string) {
      line(`  ${label.padEnd(20)} ${value}`);
    },
    note(text: string) {
      line(`  - ${text}`);
    },
    progress(progress: HopProgress) {
      const due =
        progress.dueInSeconds === undefined ? 'all hops done' : `next hop due in ${progress.dueInSeconds} s`;
      const text = `  hop ${progress.hop} of ${progress.hops} done | ${due} | recipient holds ${progress.recipient}`;
      if (live) {
        output.write(`\r\x1b[2K${text}`);
        progressShown = true;
      } else if (progress.hop !== lastHop) {
        output.write(`${text}\n`);
      }
      lastHop = progress.hop;
    },
    /** Ends the live progress line. */
    endProgress() {
      if (live && progressShown) output.write('\n');
      progressShown = false;
    },
    table(headers: string[], rows: string[][]) {
      const widths = headers.map((header, column) =>
        Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
      );
      const format = (cells: string[]) =>
        `  ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')}`.trimEnd();
      line(format(headers));
      for (const row of rows) line(format(row));
    },
  };
}
