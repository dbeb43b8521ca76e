// A tiny loopback http proxy that only tunnels (CONNECT), for the proxy
// specs. usage: node connect_proxy.js LOG_FILE MODE [SECONDS]
// MODE "tunnel": answers each CONNECT 200 and pipes the bytes to the
// target (loopback only); "refuse": answers each CONNECT 403 and closes; a
// number K: tunnels the first K-1 CONNECTs and refuses the rest.
// Any other request is answered 405. Prints its port on the first line of
// stdout and its pid on the second. Appends one line per CONNECT to
// LOG_FILE ("CONNECT host:port 200|403"). Exits by itself after SECONDS
// (default 60).
'use strict';
const http = require('http');
const net = require('net');
const fs = require('fs');

const log = process.argv[2];
const mode = process.argv[3];
const seconds = Number(process.argv[4] || 60);
const refuseFrom = mode === 'tunnel' ? Infinity : mode === 'refuse' ? 1 : Number(mode);
if (!log || !(refuseFrom >= 1) || !(seconds > 0)) {
  process.stderr.write('usage: node connect_proxy.js LOG_FILE tunnel|refuse|K [SECONDS]\n');
  process.exit(64);
}
fs.writeFileSync(log, '');
let connects = 0;

const server = http.createServer((req, res) => {
  fs.appendFileSync(log, req.method + ' ' + req.url + ' 405\n');
  res.writeHead(405, { connection: 'close' });
  res.end();
});
server.on('connect', (req, sock, head) => {
  const [host, port] = req.url.split(':');
  const loopback = host === '127.0.0.1' || host === 'localhost';
  connects += 1;
  if (connects >= refuseFrom || !loopback) {
    fs.appendFileSync(log, 'CONNECT ' + req.url + ' 403\n');
    sock.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    return;
  }
  const up = net.connect(Number(port), host, () => {
    fs.appendFileSync(log, 'CONNECT ' + req.url + ' 200\n');
    sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head && head.length) up.write(head);
    up.pipe(sock);
    sock.pipe(up);
  });
  up.on('error', () => sock.destroy());
  sock.on('error', () => up.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n' + process.pid + '\n');
});
setTimeout(() => process.exit(0), seconds * 1000);
