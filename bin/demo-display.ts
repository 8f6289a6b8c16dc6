import type { HopLanding, LatenessSummary } from './demo-hops.ts';

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

/** The column where a field's value starts: two spaces, a label of 20, one space. */
const VALUE_COLUMN = 23;

/**
 * The demo's output. On a terminal the hops' progress is one line rewritten in place (carriage
 * return and erase-line, nothing else); piped, no control code is written: a progress line is
 * printed only when a hop completes. A signature is shown whole, with its explorer link (`link`)
 * on the line below, under it.
 */
export function createDisplay(output: Output, link: (signature: string) => string) {
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

  const field = (label: string, value: string) => line(`  ${label.padEnd(VALUE_COLUMN - 3)} ${value}`);
  /** A transaction's signature, whole, then what to say of it; its explorer link below. */
  const signature = (label: string, value: string, comment = '') => {
    field(label, `${value}${comment && ` ${comment}`}`);
    line(`${' '.repeat(VALUE_COLUMN)}${link(value)}`);
  };

  return {
    heading(text: string) {
      line('');
      line(text);
    },
    field,
    signature,
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
    /** A hop that landed, and how late by each clock. */
    hopLanded(landing: HopLanding) {
      signature(
        `hop ${landing.hop} landed`,
        landing.signature,
        `late ${landing.chainLateSeconds} s by the chain's clock, ${seconds(landing.wallLateMs)} by the wall's`,
      );
    },
    /** The landed hops' lateness, p50 and max. */
    lateness(summary: LatenessSummary) {
      const { chainSeconds, wallMs } = summary;
      field(
        'lateness',
        `p50 ${chainSeconds.p50} s / ${seconds(wallMs.p50)}, max ${chainSeconds.max} s / ${seconds(wallMs.max)} (chain's clock / wall's, ${summary.hops} hops)`,
      );
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

/** Milliseconds as seconds to the hundredth. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}
