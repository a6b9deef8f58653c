// The ceiling: a bare node:http server answering a fixed JSON body of RESPONSE_BYTES bytes to any
// request, after reading the request body (as the real service does); with ANSWER=422, the 422
// body the service gives a truncated JSON body. Prints "listening <port>".
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { createServer } from 'node:http';

const size = Number(process.env.RESPONSE_BYTES ?? 700);
const skeleton = { access_token: '', expires_in: 900, token_type: 'bearer' };
const padding = Math.max(0, size - Buffer.byteLength(JSON.stringify(skeleton)));
const invalid = process.env.ANSWER === '422';
const body = Buffer.from(
  invalid
    ? '{"detail":[{"type":"json_invalid","loc":["body",13],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}'
    : JSON.stringify({ ...skeleton, access_token: 'x'.repeat(padding) }),
);
const headers = invalid
  ? { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }
  : { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-store', pragma: 'no-cache' };

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(invalid ? 422 : 200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port} body ${body.length}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
