#!/usr/bin/env node
// A loopback server that answers every request with garbage, for the bad
// input specs: usage: node garbage_server.js MODE COUNT_FILE [SECONDS]
// A HEAD (the preflight read leaselua sends before its first mutation) is
// answered 404 BlobNotFound, a fresh target, so that the garbage meets the
// first mutation.
// MODE: not-http     a banner and binary bytes, no HTTP at all
//       huge-headers a 201 whose headers are 100 KB long
//       huge-body    a 201 with a 10 MB body
//       bad-xml      a 409 whose XML error body is not well formed
// Plain TCP on 127.0.0.1, a port chosen by the kernel: the first stdout
// line is the port, the second the pid. Each request head received (up to
// its blank line) rewrites COUNT_FILE with the count so far. It exits by
// itself after SECONDS (default 20).
"use strict";
const net = require("net");
const fs = require("fs");

const mode = process.argv[2];
const countFile = process.argv[3];
const seconds = Number(process.argv[4] || 20);
const MODES = new Set(["not-http", "huge-headers", "huge-body", "bad-xml"]);
if (!MODES.has(mode) || !countFile || !(seconds > 0)) {
  process.stderr.write("usage: node garbage_server.js not-http|huge-headers|huge-body|bad-xml COUNT_FILE [SECONDS]\n");
  process.exit(64);
}
let requests = 0;
fs.writeFileSync(countFile, "0\n");

function answer(sock) {
  switch (mode) {
    case "not-http":
      sock.end(Buffer.concat([Buffer.from("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"), Buffer.from([0, 0, 1, 0x14, 0xff, 0xfe, 7])]));
      break;
    case "huge-headers": {
      const lines = ["HTTP/1.1 201 Created", "Content-Length: 0"];
      for (let i = 0; lines.join("\r\n").length < 100 * 1024; i++) lines.push(`x-garbage-${i}: ${"g".repeat(200)}`);
      sock.end(lines.join("\r\n") + "\r\n\r\n");
      break;
    }
    case "huge-body": {
      const size = 10 * 1024 * 1024;
      sock.write(`HTTP/1.1 201 Created\r\nContent-Length: ${size}\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!sock.write(chunk)) return sock.once("drain", pump);
        }
        return sock.end();
      };
      pump();
      break;
    }
    case "bad-xml": {
      const body = '<?xml version="1.0" encoding="utf-8"?><Error><Code>LeaseAlreadyPresent</Cod><Message>unclosed';
      sock.end(`HTTP/1.1 409 Conflict\r\nContent-Type: application/xml\r\nContent-Length: ${Buffer.byteLength(body)}` +
        `\r\nx-ms-request-id: garbage\r\nConnection: close\r\n\r\n${body}`);
      break;
    }
    default:
      sock.destroy();
  }
}

const server = net.createServer((sock) => {
  let buf = Buffer.alloc(0);
  sock.on("error", () => {});
  sock.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0 || sock._answered) return;
    sock._answered = true;
    requests += 1;
    fs.writeFileSync(countFile, requests + "\n");
    if (buf.subarray(0, 5).toString() === "HEAD ") {
      sock.end("HTTP/1.1 404 The specified blob does not exist.\r\nx-ms-error-code: BlobNotFound\r\n" +
        "x-ms-request-id: garbage-preflight\r\nx-ms-version: 2023-11-03\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    answer(sock);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(server.address().port + "\n" + process.pid + "\n");
});
setTimeout(() => process.exit(0), seconds * 1000).unref();
process.on("SIGTERM", () => process.exit(0));
