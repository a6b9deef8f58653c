// The ceiling: a bare node:http server answering a fixed JSON body of RESPONSE_BYTES bytes to any
// request, after reading the request body (as the real service does). Prints "listening <port>".
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { createServer } from 'node:http';

const size = Number(process.env.RESPONSE_BYTES ?? 700);
const skeleton = { access_token: '', expires_in: 900, token_type: 'bearer' };
const padding = Math.max(0, size - Buffer.byteLength(JSON.stringify(skeleton)));
const body = Buffer.from(JSON.stringify({ ...skeleton, access_token: 'x'.repeat(padding) }));

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
      pragma: 'no-cache',
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port} body ${body.length}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
