/** A Dockerfile read as Docker reads it: continuation lines joined, comments dropped, by stage. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole !== '') logical.push(whole);
  }
  const stages: { from: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const entry of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(entry) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', , name] = args.split(/\s+/);
      stages.push({ from, name, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

/** The arguments of the stage's last `keyword` (what Docker uses), or undefined. */
export function last(stage: Stage, keyword: string): string | undefined {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).at(-1)?.args;
}

/** An exec-form array (`["node", "x"]`), or undefined for the shell form. */
export function execForm(args: string | undefined): string[] | undefined {
  if (args === undefined || !args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? parsed : undefined;
}

/** Every `ENV name=value` of the stage, in order (values without spaces or quotes). */
export function envOf(stage: Stage): Record<string, string> {
  const pairs = stage.instructions.filter((instruction) => instruction.keyword === 'ENV').flatMap((instruction) => instruction.args.split(/\s+/));
  return Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}
