// A plain-http server that only counts, for the specs that must prove that
// nothing was sent. usage: node count_server.js COUNT_FILE [SECONDS] [HOST]
// Listens on HOST (default 127.0.0.1), port 0. Prints its port on the first
// line of stdout and its pid on the second. Every request is answered 500
// and rewrites COUNT_FILE with the number of requests so far; every TCP
// connection rewrites COUNT_FILE.conn likewise. Exits by itself after
// SECONDS (default 20).
'use strict';
const http = require('http');
const fs = require('fs');

const countFile = process.argv[2];
const seconds = Number(process.argv[3] || 20);
const host = process.argv[4] || '127.0.0.1';
if (!countFile || !(seconds > 0)) {
  process.stderr.write('usage: node count_server.js COUNT_FILE [SECONDS] [HOST]\n');
  process.exit(64);
}
let requests = 0;
let connections = 0;
fs.writeFileSync(countFile, '0\n');
fs.writeFileSync(countFile + '.conn', '0\n');

const server = http.createServer((req, res) => {
  requests += 1;
  fs.writeFileSync(countFile, requests + '\n');
  req.resume();
  res.writeHead(500, { 'content-type': 'text/plain', connection: 'close' });
  res.end('count_server: no request was expected\n');
});
server.on('connection', () => {
  connections += 1;
  fs.writeFileSync(countFile + '.conn', connections + '\n');
});
server.listen(0, host, () => {
  process.stdout.write(server.address().port + '\n' + process.pid + '\n');
});
setTimeout(() => process.exit(0), seconds * 1000);
