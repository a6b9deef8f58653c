import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-run.js';
import { parseExposition } from '../helpers/ops-prometheus.js';
import { cleanupOps, startServer } from '../helpers/ops-server.js';
import { readRepoFile } from '../docs/markdown.js';
import { alertRules, asPromql, dashboard, dashboardQueries, headingAnchors, metricNames, RULES_FILE, RULES_TEST_FILE } from './monitoring-files.js';
import { hasTool, runTool } from './tools.js';

// The dashboard and the alert rules that ship in deploy/: Prometheus's own promtool checks the
// rules and runs their unit tests, and every metric either file reads must be one a built server
// really exposes on /metrics, so a renamed metric cannot leave a panel blank or an alert silent.

const RULES = alertRules();
const QUERIES = dashboardQueries(dashboard());
/** Made by Prometheus for each scrape target, not exposed by the service. */
const PROMETHEUS_OWN = new Set(['up']);

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe.skipIf(!hasTool('promtool'))('deploy/prometheus/, by promtool', () => {
  it('passes promtool check rules', async () => {
    const result = await runTool('promtool', ['check', 'rules', RULES_FILE], { cwd: REPO_ROOT });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`SUCCESS: ${RULES.length} rules found`);
  });

  it('passes its unit tests, which fire each alert and keep each silent on a healthy service', async () => {
    const result = await runTool('promtool', ['test', 'rules', RULES_TEST_FILE], { cwd: REPO_ROOT });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toMatchObject({ code: 0, stdout: expect.stringContaining('SUCCESS') });
    const tests = readRepoFile(RULES_TEST_FILE);
    for (const { alert } of RULES) {
      // Fired at least once (an exp_alerts list with entries) and expected silent at least once.
      expect(tests, alert).toMatch(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`));
      expect(tests, alert).toMatch(new RegExp(`alertname: ${alert},? exp_alerts: \\[\\]|alertname: ${alert}\\n\\s+exp_alerts: \\[\\]`));
    }
  });

  it('parses every dashboard expression as PromQL', async () => {
    // promtool parses a recording rule's expression as Prometheus would a panel's query.
    dir = mkdtempSync(join(tmpdir(), 'school-auth-dashboard-'));
    const rules = QUERIES.map(({ expr }, index) => `      - record: panel_query_${index}\n        expr: ${JSON.stringify(asPromql(expr))}`);
    writeFileSync(join(dir, 'dashboard-queries.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
    const result = await runTool('promtool', ['check', 'rules', join(dir, 'dashboard-queries.yml')]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  });
});

describe('deploy/prometheus/school-auth-alerts.yml and deploy/grafana/school-auth.json, as written', () => {
  it('has the alerts of the runbook, each with a summary and a runbook section of docs/operations.md that exists', () => {
    expect(RULES.map(({ alert }) => alert).sort()).toEqual(
      [
        'SchoolAuthAuditSealerBehind',
        'SchoolAuthDatabaseDown',
        'SchoolAuthDown',
        'SchoolAuthHashQueueSaturated',
        'SchoolAuthIdpUnavailable',
        'SchoolAuthSignInFailures',
        'SchoolAuthSigningKeyOverdue',
        'SchoolAuthThrottling',
      ].sort(),
    );
    const anchors = headingAnchors(readRepoFile('docs/operations.md'));
    for (const { alert, annotations } of RULES) {
      expect(annotations.summary, alert).toMatch(/\S/);
      const runbook = /^docs\/operations\.md#(.+)$/.exec(annotations.runbook ?? '');
      expect(runbook?.[1] !== undefined && anchors.has(runbook[1]), `${alert}: ${annotations.runbook}`).toBe(true);
    }
  });

  it('chooses its data source through a variable, which every panel uses', () => {
    const board = dashboard();
    expect(board.templating.list.find(({ name }) => name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const text = readRepoFile('deploy/grafana/school-auth.json');
    expect([...text.matchAll(/"uid": "([^"]*)"/g)].map((match) => match[1]).filter((uid) => uid !== '${datasource}' && uid !== 'school-auth')).toEqual([]);
    expect(QUERIES.length).toBeGreaterThan(10);
  });

  it('reads metric names the way the name check below relies on', () => {
    expect(metricNames('sum by (le, route) (rate(a_bucket{route=~"x|y"}[$__rate_interval])) / on(instance) b and c > 90 * 86400')).toEqual(['a_bucket', 'b', 'c']);
  });
});

describe('the metrics the dashboard and the alerts read, on a running server', () => {
  let exposed: Set<string>;
  beforeAll(async () => {
    const server = await startServer();
    const response = await fetch(`${server.managementUrl}/metrics`);
    const exposition = parseExposition(await response.text());
    // A family is exposed (HELP and TYPE) even before its first sample, as a labelled counter is.
    exposed = new Set([...exposition.types.keys(), ...exposition.samples.map(({ name }) => name)]);
  }, 60_000);
  afterAll(cleanupOps);

  it('exposes every metric named in the rules and the dashboard', () => {
    const used = new Set([...RULES.map(({ expr }) => expr), ...QUERIES.map(({ expr }) => expr)].flatMap(metricNames));
    expect(used).toContain('school_auth_signing_key_age_seconds');
    expect(used).toContain('school_auth_audit_unsealed_oldest_seconds');
    const missing = [...used].filter((name) => !PROMETHEUS_OWN.has(name) && !exposed.has(name) && !exposed.has(name.replace(/_(?:bucket|sum|count)$/, '')));
    expect(missing).toEqual([]);
  });
});
