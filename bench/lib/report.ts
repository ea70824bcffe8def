/** Tables for the terminal and BENCHMARKS.md (markdown). */
import { fmtOps, fmtRatio, median, type Series } from './measure.js';

/** `12 300 [11 900–12 800]` */
export function cell(s: Series | undefined): string {
  return s ? `${fmtOps(s.median)} [${fmtOps(s.min)}–${fmtOps(s.max)}]` : '–';
}

/** The ratio a/b of two series measured in the same rounds: the median of the per-round ratios, with their range. */
export function pairedRatio(a: Series | undefined, b: Series | undefined): { median: number; min: number; max: number } | undefined {
  if (!a || !b || a.runs.length !== b.runs.length) return undefined;
  const ratios = a.runs.map((v, i) => v / b.runs[i]!);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

export function ratioCell(r: { median: number; min: number; max: number } | undefined, asPercent = false): string {
  if (!r) return '–';
  if (asPercent) return `${(r.median * 100).toFixed(0)}% [${(r.min * 100).toFixed(0)}–${(r.max * 100).toFixed(0)}%]`;
  return `${fmtRatio(r.median)}× [${fmtRatio(r.min)}–${fmtRatio(r.max)}]`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
