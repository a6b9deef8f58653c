// Command-line options of bench/run.mjs.
import process from 'node:process';
import { parseArgs } from 'node:util';

export const SCENARIOS = ['refresh', 'refresh-rotation', 'login', 'argon2-raw', 'invalid-body', 'jwks', 'login-storm', 'bare'];

const HELP = `usage: node bench/run.mjs [options]

  --db sqlite|postgres   storage (postgres needs DATABASE_URL of a server where we may CREATE DATABASE)
  --duration S           measured seconds per scenario (default 10)
  --warmup S             warm-up seconds per scenario, discarded (default 3)
  --connections N        concurrent connections (default 50)
  --sessions N           sessions created for reusable-mode refreshes (default 2000)
  --only a,b             run a subset of: ${SCENARIOS.join(', ')}
  --cpu-prof             run the server under node --cpu-prof (bench/results/profiles)
  --entry PATH           CLI to start (default dist/cli/main.js), e.g. another build to compare
  -h, --help             this text
`;

function number(name, raw, min) {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name}: expected a number >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string', default: 'sqlite' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      sessions: { type: 'string', default: '2000' },
      only: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      entry: { type: 'string', default: 'dist/cli/main.js' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  if (values.db !== 'sqlite' && values.db !== 'postgres') throw new Error(`--db: expected sqlite or postgres, got ${JSON.stringify(values.db)}`);
  if (values.db === 'postgres' && !process.env.DATABASE_URL) throw new Error('--db postgres needs DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)');
  const only = values.only === undefined ? SCENARIOS : values.only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only.filter((name) => !SCENARIOS.includes(name));
  if (unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  const connections = Math.floor(number('connections', values.connections, 2));
  return {
    db: values.db,
    duration: number('duration', values.duration, 1),
    warmup: number('warmup', values.warmup, 0),
    connections,
    sessions: Math.max(connections, Math.floor(number('sessions', values.sessions, 1))),
    only: new Set(only),
    cpuProf: values['cpu-prof'],
    entry: values.entry,
  };
}
