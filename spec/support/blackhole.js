// A loopback TCP listener that accepts every connection and never sends a
// byte (a TLS handshake or a proxy CONNECT that hangs), for the specs.
// usage: node blackhole.js [SECONDS]: prints its port on the first line,
// exits by itself after SECONDS (default 30).
'use strict';
const net = require('net');
const seconds = Number(process.argv[2] || 30);
const held = [];
const server = net.createServer((sock) => {
  held.push(sock);
  sock.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n');
});
setTimeout(() => process.exit(0), seconds * 1000);
