#!/usr/bin/env node
// A loopback server that echoes the caller's credential, for the specs on
// secrets a service hands back: every request is answered 403
// AuthenticationFailed with the bearer token (without its "Bearer "
// prefix) in the Server and x-ms-request-id headers and in the XML
// <Message>. usage: node echo_server.js COUNT_FILE [SECONDS]
// Plain http on 127.0.0.1, a port chosen by the kernel: the first stdout
// line is the port, the second the pid. Every request rewrites COUNT_FILE
// with the count so far. It exits by itself after SECONDS (default 20).
"use strict";
const http = require("http");
const fs = require("fs");

const countFile = process.argv[2];
const seconds = Number(process.argv[3] || 20);
if (!countFile || !(seconds > 0)) {
  process.stderr.write("usage: node echo_server.js COUNT_FILE [SECONDS]\n");
  process.exit(64);
}
let requests = 0;
fs.writeFileSync(countFile, "0\n");

const server = http.createServer((req, res) => {
  requests += 1;
  fs.writeFileSync(countFile, requests + "\n");
  req.resume();
  req.on("end", () => {
    const token = (req.headers.authorization || "none").replace(/^Bearer\s+/i, "");
    const body = '<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code>' +
      `<Message>Server failed to authenticate the request. Token was: ${token}</Message></Error>`;
    res.writeHead(403, {
      "content-type": "application/xml",
      "content-length": Buffer.byteLength(body),
      "x-ms-error-code": "AuthenticationFailed",
      "x-ms-request-id": token,
      "x-ms-version": "2023-11-03",
      server: "echo/" + token,
      connection: "close",
    });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(server.address().port + "\n" + process.pid + "\n");
});
setTimeout(() => process.exit(0), seconds * 1000).unref();
process.on("SIGTERM", () => process.exit(0));
