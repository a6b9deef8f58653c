import { readRepoFile } from '../docs/markdown.js';

/** An alert of deploy/prometheus/school-auth-alerts.yml, as the file writes it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly annotations: Readonly<Record<string, string>>;
}

export const RULES_FILE = 'deploy/prometheus/school-auth-alerts.yml';
export const RULES_TEST_FILE = 'deploy/prometheus/school-auth-alerts.test.yml';
export const DASHBOARD_FILE = 'deploy/grafana/school-auth.json';

/** The value of a YAML scalar as the rules file writes them: plain, or in double quotes. */
function scalar(text: string): string {
  const trimmed = text.trim();
  return trimmed.startsWith('"') ? (JSON.parse(trimmed) as string) : trimmed;
}

/**
 * The alerts of the rules file, read line by line: it keeps to one layout (`- alert:` starting a
 * rule, `expr:` on one line or as a `|` block, `annotations:` as a block of `key: value` lines),
 * and promtool, which reads it as YAML, checks the same file in alert-rules.test.ts.
 */
export function alertRules(): AlertRule[] {
  const lines = readRepoFile(RULES_FILE).split('\n');
  const rules: { alert: string; expr: string; annotations: Record<string, string> }[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const alert = /^\s*- alert: (.+)$/.exec(line);
    if (alert) rules.push({ alert: scalar(alert[1]!), expr: '', annotations: {} });
    const rule = rules.at(-1);
    if (rule === undefined) continue;
    const expr = /^(\s*)expr: (.*)$/.exec(line);
    if (expr && expr[2] === '|') {
      const block: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1]!.startsWith(`${expr[1]!}  `) || lines[i + 1]!.trim() === '')) block.push(lines[(i += 1)]!.trim());
      rule.expr = block.join(' ').trim();
    } else if (expr) rule.expr = expr[2]!;
    const annotations = /^(\s*)annotations:$/.exec(line);
    while (annotations && i + 1 < lines.length && lines[i + 1]!.startsWith(`${annotations[1]!}  `)) {
      const pair = /^\s*([a-z_]+): (.*)$/.exec(lines[(i += 1)]!);
      if (pair) rule.annotations[pair[1]!] = scalar(pair[2]!);
    }
  }
  return rules;
}

interface Panel {
  readonly title?: string;
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly Panel[];
}

export interface Dashboard {
  readonly templating: { readonly list: readonly { readonly name: string; readonly type: string; readonly query?: unknown; readonly definition?: string }[] };
  readonly panels: readonly Panel[];
}

export function dashboard(): Dashboard {
  return JSON.parse(readRepoFile(DASHBOARD_FILE)) as Dashboard;
}

/** Every panel's query expressions, rows' nested panels included, with the panel's title. */
export function dashboardQueries(board: Dashboard): { panel: string; expr: string }[] {
  const walk = (panels: readonly Panel[]): { panel: string; expr: string }[] =>
    panels.flatMap((panel) => [
      ...(panel.targets ?? []).flatMap((target) => (target.expr === undefined ? [] : [{ panel: panel.title ?? '', expr: target.expr }])),
      ...walk(panel.panels ?? []),
    ]);
  return walk(board.panels);
}

/** A Grafana expression as Prometheus receives it: the dashboard's variables given values. */
export function asPromql(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*');
}

const NOT_METRICS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, ranges
 * and grouping clauses are gone, less functions (a name before `(`), keywords and numbers.
 */
export function metricNames(expr: string): string[] {
  const bare = asPromql(expr)
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)].map((match) => match[1]!);
  return [...new Set(names.filter((name) => !NOT_METRICS.has(name.toLowerCase())))];
}

/** The anchors GitHub gives the headings of a Markdown file (a `#` line in a code block is none). */
export function headingAnchors(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  const headings = [...prose.matchAll(/^#{1,6} (.+)$/gm)].map((match) => match[1]!);
  return new Set(
    headings.map((heading) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );
}
