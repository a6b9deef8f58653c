// The least a refresh, a rotation or a login can cost on this stack, for bench/targets.mjs: one
// node:http server, MODE=refresh|rotation|login, own SQLite database in DATA_DIR (WAL,
// synchronous=NORMAL), the same claims, signature (ES256, node:crypto) and JSON answer as ours.
// refresh: one prepared point read by the token's digest, one signature. rotation: also consumes
// the row and inserts its successor in one transaction. login: one argon2id verify (m=19456 t=2
// p=1, @node-rs/argon2), one insert, one signature. Prints "listening <port>".
import { Buffer } from 'node:buffer';
import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import process from 'node:process';
import { hash, verify } from '@node-rs/argon2';
import Database from 'better-sqlite3';
import { LIMIT_TOKENS, limitToken } from './lib/limit-tokens.mjs';
import { ADMINS, SCHOOL } from './lib/scenarios.mjs';

const mode = process.env.MODE ?? 'refresh';
const digest = (token) => createHash('sha256').update(token).digest('base64url');
const db = new Database(join(process.env.DATA_DIR, 'limit.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`create table if not exists tokens (token_hash text primary key, session_id text, admin_id text, school_id text,
  username text, created_at integer, expires_at integer, consumed_at integer, successor_sealed text)`);
db.exec('create table if not exists admins (school_id text, username text, password_hash text, primary key (school_id, username))');
const insert = db.prepare('insert into tokens values (?, ?, ?, ?, ?, ?, ?, null, null)');
const now = () => Math.floor(Date.now() / 1000);
db.transaction(() => {
  for (let i = 0; i < LIMIT_TOKENS; i += 1) insert.run(digest(limitToken(i)), randomUUID(), `admin-${i % 4}`, SCHOOL, ADMINS[i % 4].username, now(), now() + 86_400);
})();
const insertAdmin = db.prepare('insert or replace into admins values (?, ?, ?)');
for (const admin of ADMINS) insertAdmin.run(SCHOOL, admin.username, await hash(admin.password, { memoryCost: 19456, timeCost: 2, parallelism: 1, algorithm: 2 }));
const read = db.prepare('select session_id, admin_id, school_id, username, expires_at from tokens where token_hash = ? and consumed_at is null');
const consume = db.prepare('update tokens set consumed_at = ? where token_hash = ? and consumed_at is null');
const readAdmin = db.prepare('select password_hash from admins where school_id = ? and username = ?');
const rotate = db.transaction((row, hashed, successor, at) => {
  if (consume.run(at, hashed).changes === 0) return false;
  insert.run(digest(successor), row.session_id, row.admin_id, row.school_id, row.username, at, row.expires_at);
  return true;
});

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'limit-key' })).toString('base64url');
function accessToken(row, iat) {
  const claims = { iss: 'http://127.0.0.1', aud: 'school-auth', sub: row.admin_id, school_id: row.school_id, username: row.username, sid: row.session_id, iat, exp: iat + 900, jti: randomUUID(), acr: 'aal1', amr: ['pwd'] };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}
function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', pragma: 'no-cache' });
  res.end(text);
}
async function answer(text) {
  const body = JSON.parse(text);
  const at = now();
  if (mode === 'login') {
    const row = readAdmin.get(body.school_id, body.username);
    if (row === undefined || !(await verify(row.password_hash, body.password))) return [401, { detail: 'Invalid credentials' }];
    const token = randomBytes(32).toString('base64url');
    const session = { session_id: randomUUID(), admin_id: 'admin', school_id: body.school_id, username: body.username, expires_at: at + 86_400 };
    insert.run(digest(token), session.session_id, session.admin_id, session.school_id, session.username, at, session.expires_at);
    return [200, { access_token: accessToken(session, at), expires_in: 900, school_id: body.school_id, username: body.username, token_type: 'bearer', refresh_token: token, refresh_expires_in: 86_400 }];
  }
  const hashed = digest(body.refresh_token);
  const row = read.get(hashed);
  if (row === undefined) return [401, { detail: 'Invalid refresh token' }];
  if (mode !== 'rotation') return [200, { access_token: accessToken(row, at), expires_in: 900, token_type: 'bearer' }];
  const successor = randomBytes(32).toString('base64url');
  if (!rotate(row, hashed, successor, at)) return [401, { detail: 'Invalid refresh token' }];
  return [200, { access_token: accessToken(row, at), expires_in: 900, token_type: 'bearer', refresh_token: successor, refresh_expires_in: row.expires_at - at }];
}
const server = createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => answer(text).then(([status, body]) => send(res, status, body), () => send(res, 500, { detail: 'error' })));
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
