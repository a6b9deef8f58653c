/** One sample of the Prometheus text exposition format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly samples: readonly Sample[];
  /** metric family -> TYPE */
  readonly types: ReadonlyMap<string, string>;
  readonly help: ReadonlySet<string>;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: -?\\d+)?$`);
/** Prometheus parses values with Go's ParseFloat: NaN and Inf in any case (prom-client writes `Nan`). */
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

/**
 * Parses the text format (version 0.0.4) strictly: any line that is neither a comment nor a
 * well-formed sample throws, naming the line.
 */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const typeMatch = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (typeMatch) types.set(typeMatch[1]!, typeMatch[2]!);
      const helpMatch = /^# HELP (\S+) /.exec(line);
      if (helpMatch) help.add(helpMatch[1]!);
      continue;
    }
    const match = SAMPLE_LINE.exec(line);
    if (!match || !VALUE.test(match[3]!)) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1]!, labels, value: toNumber(match[3]!) });
  }
  return { samples, types, help };
}

/** The samples named `name` whose labels include every given label. */
export function find(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The value of the one sample matching; undefined when there is none; throws when ambiguous. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const matches = find(exposition, name, labels);
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matches[0]?.value;
}

function toNumber(text: string): number {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}
