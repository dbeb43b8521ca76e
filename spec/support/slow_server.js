#!/usr/bin/env node
// A slow fake Azure Blob endpoint for the specs: plain http on 127.0.0.1,
// a port chosen by the kernel, and answers shaped enough like Azure for the
// core's parser. It is not an emulator: it keeps one body (the last Put
// Blob) and reports the lease as available/unlocked on every HEAD.
//
// usage: node slow_server.js LOGFILE [--delay-put=MS] [--delay-get=MS]
//                                     [--delay-head=MS] [--delay-lease=MS]
//                                     [--delay-all=MS] [--slow-puts=N]
//                                     [--lifetime=MS] [--get-version=V]
// The same knobs as environment variables: DELAY_PUT_MS, DELAY_GET_MS,
// DELAY_HEAD_MS, DELAY_LEASE_MS, DELAY_ALL_MS, SLOW_PUTS, LIFETIME_MS, GET_VERSION
// (argv wins). A Put Blob is a PUT without comp= or restype=; SLOW_PUTS=N
// delays only the first N of them (default: every one). --get-version=V
// answers Get Blob with x-ms-version V instead of 2023-11-03 (a service
// that executed the read under another version).
//
// The first stdout line is the port. Every request is appended to LOGFILE
// as one JSON line {method, url, lease_action, t, body_len} (t in ms since
// the epoch) once its body has been read completely and BEFORE any delay,
// so the log proves that a request arrived even if the client dies while
// waiting. A Put Blob's body is committed on arrival, before the delay
// (only the response is slow). The server exits by itself after
// LIFETIME_MS (default 60 s).
"use strict";

const http = require("http");
const fs = require("fs");
const crypto = require("crypto");

const logPath = process.argv[2];
if (!logPath || logPath.startsWith("--")) {
  process.stderr.write("usage: slow_server.js LOGFILE [--delay-put=MS] ...\n");
  process.exit(64);
}

function knob(flag, env, dflt) {
  for (const a of process.argv.slice(3)) {
    if (a.startsWith(`--${flag}=`)) return Number(a.slice(flag.length + 3));
  }
  if (process.env[env] !== undefined && process.env[env] !== "") return Number(process.env[env]);
  return dflt;
}

const delayAll = knob("delay-all", "DELAY_ALL_MS", 0);
const delays = {
  put: knob("delay-put", "DELAY_PUT_MS", delayAll),
  get: knob("delay-get", "DELAY_GET_MS", delayAll),
  head: knob("delay-head", "DELAY_HEAD_MS", delayAll),
  lease: knob("delay-lease", "DELAY_LEASE_MS", delayAll),
  other: delayAll,
};
const lifetime = knob("lifetime", "LIFETIME_MS", 60000);
if (!(lifetime > 0 && lifetime < 2 ** 31)) {
  process.stderr.write("slow_server: lifetime must be 1 .. 2^31-1 ms\n");
  process.exit(64);
}
const slowPuts = knob("slow-puts", "SLOW_PUTS", Infinity);
const getVersion = (process.argv.slice(3).find((a) => a.startsWith("--get-version=")) || "").slice(14) ||
  process.env.GET_VERSION || "2023-11-03";
for (const [k, v] of Object.entries({ ...delays, lifetime, slowPuts })) {
  if (Number.isNaN(v) || v < 0) {
    process.stderr.write(`slow_server: bad ${k} value\n`);
    process.exit(64);
  }
}

let lastBody = null;
let putsSeen = 0;
let etagCounter = 0;
let lastModified = new Date();

function etag() {
  return `"0x8DC${(++etagCounter).toString(16).padStart(11, "0").toUpperCase()}"`;
}

function baseHeaders() {
  return {
    "x-ms-request-id": crypto.randomUUID(),
    "x-ms-version": "2023-11-03",
    Date: new Date().toUTCString(),
    Server: "slow-fake-blob/1.0",
  };
}

function classify(req, query) {
  const action = req.headers["x-ms-lease-action"] || null;
  if (req.method === "PUT" && query.get("restype") === "container") return ["container", action];
  if (req.method === "PUT" && query.get("comp") === "lease") return ["lease", action];
  if (req.method === "PUT") return ["put", action];
  if (req.method === "GET") return ["get", action];
  if (req.method === "HEAD") return ["head", action];
  return ["other", action];
}

function answer(req, res, kind, action, body) {
  const h = baseHeaders();
  // the client request ID comes back, as the service does
  if (req.headers["x-ms-client-request-id"]) h["x-ms-client-request-id"] = req.headers["x-ms-client-request-id"];
  switch (kind) {
    case "container":
      h.ETag = etag();
      h["Last-Modified"] = new Date().toUTCString();
      res.writeHead(201, { ...h, "Content-Length": 0 });
      return res.end();
    case "put":
      h.ETag = `"0x8DC${etagCounter.toString(16).padStart(11, "0").toUpperCase()}"`;
      h["Last-Modified"] = lastModified.toUTCString();
      h["Content-MD5"] = crypto.createHash("md5").update(body).digest("base64");
      h["x-ms-request-server-encrypted"] = "true";
      res.writeHead(201, { ...h, "Content-Length": 0 });
      return res.end();
    case "lease": {
      h.ETag = `"0x8DC${etagCounter.toString(16).padStart(11, "0").toUpperCase()}"`;
      h["Last-Modified"] = lastModified.toUTCString();
      if (action === "acquire") {
        h["x-ms-lease-id"] = req.headers["x-ms-proposed-lease-id"] || crypto.randomUUID();
        res.writeHead(201, { ...h, "Content-Length": 0 });
      } else if (action === "break") {
        h["x-ms-lease-time"] = "0";
        res.writeHead(202, { ...h, "Content-Length": 0 });
      } else if (action === "change") {
        h["x-ms-lease-id"] = req.headers["x-ms-proposed-lease-id"] || "";
        res.writeHead(200, { ...h, "Content-Length": 0 });
      } else {
        if (action === "renew") h["x-ms-lease-id"] = req.headers["x-ms-lease-id"] || "";
        res.writeHead(200, { ...h, "Content-Length": 0 });
      }
      return res.end();
    }
    case "get":
    case "head": {
      if (lastBody === null) {
        const xml =
          '<?xml version="1.0" encoding="utf-8"?><Error><Code>BlobNotFound</Code>' +
          "<Message>The specified blob does not exist.</Message></Error>";
        h["x-ms-error-code"] = "BlobNotFound";
        h["Content-Type"] = "application/xml";
        res.writeHead(404, { ...h, "Content-Length": kind === "get" ? Buffer.byteLength(xml) : 0 });
        return res.end(kind === "get" ? xml : undefined);
      }
      h.ETag = `"0x8DC${etagCounter.toString(16).padStart(11, "0").toUpperCase()}"`;
      h["Last-Modified"] = lastModified.toUTCString();
      h["Content-Type"] = "application/json";
      h["x-ms-blob-type"] = "BlockBlob";
      h["x-ms-lease-state"] = "available";
      h["x-ms-lease-status"] = "unlocked";
      if (kind === "get") h["x-ms-version"] = getVersion;
      res.writeHead(200, { ...h, "Content-Length": lastBody.length });
      return res.end(kind === "get" ? lastBody : undefined);
    }
    default:
      res.writeHead(202, { ...h, "Content-Length": 0 });
      return res.end();
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const query = new URL(req.url, "http://127.0.0.1").searchParams;
    const [kind, action] = classify(req, query);
    const line = JSON.stringify({
      method: req.method,
      url: req.url,
      lease_action: action,
      t: Date.now(),
      body_len: body.length,
    });
    fs.appendFileSync(logPath, line + "\n");
    let delay = delays[kind === "container" ? "other" : kind] || 0;
    if (kind === "put") {
      if (++putsSeen > slowPuts) delay = 0;
      // Committed on arrival: a client killed during the delay has still
      // written, which is the doubtful write a reconcile must find.
      lastBody = body;
      lastModified = new Date();
      etag();
    }
    if (delay > 0) setTimeout(() => answer(req, res, kind, action, body), delay);
    else answer(req, res, kind, action, body);
  });
});
server.keepAliveTimeout = 5000;

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});

// Never outlive the spec that started it.
setTimeout(() => process.exit(0), lifetime);
process.on("SIGTERM", () => process.exit(0));
