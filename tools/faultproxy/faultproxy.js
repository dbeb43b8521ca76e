#!/usr/bin/env node
// A loopback TLS proxy in front of Azurite that injects scripted faults
// per request, for the fault and crash drills (spec/faults_spec.lua).
//
// usage: node faultproxy.js --cert CERT --key KEY --upstream URL
//          --upstream-ca CA --log LOGFILE [--script RULES.json]
//          [--lifetime-ms 120000] [--idle-close-ms N]
// Run it with `env -u NODE_EXTRA_CA_CERTS` (DESIGN.md section 7).
//
// It listens on 127.0.0.1 only, on a port the kernel picks, and prints the
// port as the first line of stdout. It exits by itself after --lifetime-ms.
// Every request is appended to LOGFILE as one JSON line once its body has
// been read, BEFORE it is forwarded or faulted, so the log proves arrival
// even when the client dies waiting:
//   {"kind":"request","n":1,"t":ms,"conn":3,"conn_seq":1,"method":"PUT",
//    "path":"/devstoreaccount1/c/b.json","query":"comp=lease",
//    "lease_action":"acquire","lease":null,"proposed":"3f2a...","revision":null,
//    "body_len":0,"fault":"drop","rule":0}
// (lease and proposed: 12 hex digits of the SHA-256 of the lease ID, never
// the ID itself; auth: the same of the bearer token after "Bearer ", or of
// the sig= value of a SAS, never the credential itself; client_request_id:
// x-ms-client-request-id, which the ledger's intent row records too)
// then {"kind":"upstream","n":1,"upstream_status":201} as soon as Azurite
// answered a forwarded request (it was processed), and, when the proxy is
// done with it, a {"kind":"result","n":1,...} line saying what the client
// got (or that it got nothing). {"kind":"close","conn":3} marks an idle
// connection the proxy closed.
//
// RULES.json: {"rules": [{"method": "PUT", "path_regex": "\\.json$",
//   "query_contains": "comp=lease", "lease_action": "acquire",
//   "body_contains": "\"revision\":5", "reused": true, "ordinal": 1,
//   "fault": "drop", ...}]}
// ("reused": true matches only a request that is not the first on its
// connection: a keep-alive reuse.)
// Every field but fault is optional; a rule's ordinal counts the requests
// that matched its fields (1 = the first); without one, every match is
// faulted. The first rule that applies wins. Faults:
//   forward    pass it on (the default)
//   drop       forward, read the whole answer, then close the client's
//              connection without a byte: the server processed it
//   reset      close the client's connection (TCP RST) without forwarding
//   delay      hold the answer delay_ms (default 5000), past the client's
//              timeout; forward: "before" (default: the server processes
//              it at once) or "never"
//   status     answer status (default 503) with an Azure-style XML error,
//              without forwarding
//   truncate   forward, then send the head with a larger Content-Length
//              than the bytes that follow, and close
//   close_idle forward, then close that keep-alive connection once it has
//              been idle idle_ms (default 50)
// --idle-close-ms N closes every connection idle for N ms.
"use strict";

const https = require("https");
const fs = require("fs");
const crypto = require("crypto");

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return dflt;
}

function die(msg) {
  process.stderr.write(`faultproxy: ${msg}\n`);
  process.exit(64);
}

const certFile = arg("cert");
const keyFile = arg("key");
const upstreamUrl = arg("upstream");
const upstreamCa = arg("upstream-ca");
const logPath = arg("log");
const scriptPath = arg("script");
const lifetime = Number(arg("lifetime-ms", "120000"));
const idleCloseMs = Number(arg("idle-close-ms", "0"));
if (!certFile || !keyFile || !upstreamUrl || !upstreamCa || !logPath) {
  die("usage: faultproxy.js --cert C --key K --upstream URL --upstream-ca CA --log F [--script R]");
}
if (!(lifetime > 0 && lifetime < 2 ** 31)) die("--lifetime-ms must be 1 .. 2^31-1");
const upstream = new URL(upstreamUrl);
if (upstream.protocol !== "https:") die("--upstream must be https");

const FAULTS = new Set(["forward", "drop", "reset", "delay", "status", "truncate", "close_idle"]);
let rules = [];
if (scriptPath) {
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(scriptPath, "utf8"));
  } catch (e) {
    die(`cannot read --script ${scriptPath}: ${e.message}`);
  }
  rules = (parsed.rules || []).map((r, i) => {
    const fault = r.fault || "forward";
    if (!FAULTS.has(fault)) die(`rule ${i}: unknown fault ${fault}`);
    return { ...r, fault, index: i, seen: 0, re: r.path_regex ? new RegExp(r.path_regex) : null };
  });
}

const agent = new https.Agent({ keepAlive: false, ca: fs.readFileSync(upstreamCa) });
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);

let seq = 0;
let connSeq = 0;

function log(obj) {
  fs.appendFileSync(logPath, JSON.stringify(obj) + "\n");
}

// Which credential a request carried, as a tag a spec can compare with
// its own hash of each actor's token: never the token itself.
function authTag(authorization, query) {
  const h = (s) => crypto.createHash("sha256").update(s).digest("hex").slice(0, 12);
  const m = /^Bearer (.+)$/.exec(authorization || "");
  if (m) return h(m[1]);
  const sig = /(?:^|&)sig=([^&]*)/.exec(query || "");
  return sig ? h(decodeURIComponent(sig[1])) : null;
}

// Lease IDs are secrets: the log keeps a short hash, enough to tell A's
// request from B's (the service compares IDs case- and hyphen-blind).
function leaseTag(v) {
  if (!v) return null;
  return crypto.createHash("sha256").update(String(v).toLowerCase().replace(/-/g, "")).digest("hex").slice(0, 12);
}

function revisionOf(body) {
  const m = /"revision":(\d+)/.exec(body.toString("latin1"));
  return m ? Number(m[1]) : null;
}

// The rule that applies to this request, counting matches as it goes.
function pick(req, path, query, body, connSeqNo) {
  let chosen = null;
  for (const r of rules) {
    if (r.reused && connSeqNo < 2) continue;
    if (r.method && r.method !== req.method) continue;
    if (r.re && !r.re.test(path)) continue;
    if (r.query_contains && !query.includes(r.query_contains)) continue;
    if (r.lease_action && (req.headers["x-ms-lease-action"] || "") !== r.lease_action) continue;
    if (r.body_contains && !body.toString("latin1").includes(r.body_contains)) continue;
    r.seen += 1;
    if (chosen) continue;
    if (r.ordinal && r.seen !== r.ordinal) continue;
    chosen = r;
  }
  return chosen;
}

function forward(req, body, cb) {
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (!HOP.has(k.toLowerCase())) headers[k] = v;
  }
  headers.host = upstream.host;
  headers["content-length"] = String(body.length);
  const up = https.request(
    { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
    (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => cb(null, res, Buffer.concat(chunks)));
      res.on("error", (e) => cb(e));
    },
  );
  up.on("error", (e) => cb(e));
  up.end(body);
}

function responseHeaders(res, bodyLen) {
  const h = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (!HOP.has(k.toLowerCase())) h[k] = v;
  }
  h["content-length"] = String(bodyLen);
  return h;
}

function relay(client, status, headers, body) {
  if (client.destroyed || client.writableEnded) return false;
  client.writeHead(status, headers);
  client.end(body);
  return true;
}

function errorAnswer(req, res, status) {
  const code = status === 503 ? "ServerBusy" : "InternalError";
  const msg = status === 503 ? "The server is currently unable to receive requests. Please retry your request."
    : "The server encountered an internal error. Please retry the request.";
  const body = Buffer.from(`<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code>` +
    `<Message>${msg}\nRequestId:faultproxy</Message></Error>`);
  res.writeHead(status, {
    "content-type": "application/xml",
    "content-length": String(body.length),
    "x-ms-error-code": code,
    "x-ms-request-id": crypto.randomUUID(),
    "x-ms-version": req.headers["x-ms-version"] || "2023-11-03",
    server: "leaselua-faultproxy",
  });
  res.end(body);
}

// TCP RST: a TLS socket cannot be reset itself, its TCP socket can.
function resetSocket(sock) {
  const raw = sock._parent;
  try {
    if (raw && typeof raw.resetAndDestroy === "function") raw.resetAndDestroy();
    else sock.destroy();
  } catch (e) {
    sock.destroy();
  }
}

// Closes the connection once it has been idle ms after an answer (node's
// own keep-alive timer would be reset by the server, so this is separate).
function closeWhenIdle(socket, ms) {
  socket._ll_idle_ms = ms;
  armIdle(socket);
}

function armIdle(socket) {
  clearTimeout(socket._ll_timer);
  if (!socket._ll_idle_ms || socket._ll_busy) return;
  socket._ll_timer = setTimeout(() => {
    if (socket._ll_busy || socket.destroyed) return;
    log({ kind: "close", t: Date.now(), conn: socket._ll_conn, idle_ms: socket._ll_idle_ms });
    socket.destroy();
  }, socket._ll_idle_ms);
}

function handle(req, res, body) {
  const n = ++seq;
  const sock = req.socket;
  sock._ll_seq = (sock._ll_seq || 0) + 1;
  const u = new URL(req.url, "https://127.0.0.1");
  const path = u.pathname;
  const query = u.search.replace(/^\?/, "");
  const rule = pick(req, path, query, body, sock._ll_seq);
  const fault = rule ? rule.fault : "forward";
  log({
    kind: "request",
    n,
    t: Date.now(),
    conn: sock._ll_conn,
    conn_seq: sock._ll_seq,
    method: req.method,
    path,
    query,
    lease_action: req.headers["x-ms-lease-action"] || null,
    lease: leaseTag(req.headers["x-ms-lease-id"]),
    proposed: leaseTag(req.headers["x-ms-proposed-lease-id"]),
    revision: revisionOf(body),
    auth: authTag(req.headers.authorization, query),
    client_request_id: req.headers["x-ms-client-request-id"] || null,
    body_len: body.length,
    fault,
    rule: rule ? rule.index : null,
  });
  const done = (what, extra) => log({ kind: "result", n, t: Date.now(), result: what, ...(extra || {}) });
  if (fault === "reset") {
    resetSocket(sock);
    return done("reset before forwarding");
  }
  if (fault === "status") {
    const status = rule.status || 503;
    errorAnswer(req, res, status);
    return done(`answered ${status} without forwarding`);
  }
  if (fault === "delay" && rule.forward === "never") {
    const ms = rule.delay_ms || 5000;
    setTimeout(() => {
      if (!res.destroyed && !sock.destroyed) errorAnswer(req, res, 503);
      done(`held ${ms} ms, never forwarded`);
    }, ms);
    return undefined;
  }
  return forward(req, body, (err, up, upBody) => {
    if (err) {
      if (!sock.destroyed) sock.destroy();
      return done("upstream error", { error: err.message });
    }
    const status = up.statusCode;
    log({ kind: "upstream", n, t: Date.now(), upstream_status: status });
    switch (fault) {
      case "drop":
        sock.destroy();
        return done("dropped after upstream answered", { upstream_status: status });
      case "delay": {
        const ms = rule.delay_ms || 5000;
        return setTimeout(() => {
          const sent = relay(res, status, responseHeaders(up, upBody.length), upBody);
          done(sent ? `answered after ${ms} ms` : `client gone before ${ms} ms`, { upstream_status: status });
        }, ms);
      }
      case "truncate": {
        const lines = [`HTTP/1.1 ${status} ${up.statusMessage || ""}`];
        const h = responseHeaders(up, upBody.length + 64);
        for (const [k, v] of Object.entries(h)) lines.push(`${k}: ${v}`);
        const head = lines.join("\r\n") + "\r\n\r\n";
        const partial = upBody.length > 1 ? upBody.subarray(0, upBody.length >> 1) : Buffer.from("truncated");
        sock.end(Buffer.concat([Buffer.from(head, "latin1"), partial]));
        return done("truncated", { upstream_status: status, sent_body: partial.length });
      }
      case "close_idle":
        sock._ll_idle_ms = rule.idle_ms || 50;
        relay(res, status, responseHeaders(up, upBody.length), upBody);
        return done("forwarded, connection closed when idle", { upstream_status: status });
      default:
        relay(res, status, responseHeaders(up, upBody.length), upBody);
        return done("forwarded", { upstream_status: status });
    }
  });
}

const server = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, (req, res) => {
  const sock = req.socket;
  sock._ll_busy = true;
  clearTimeout(sock._ll_timer);
  res.on("finish", () => {
    sock._ll_busy = false;
    armIdle(sock);
  });
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => handle(req, res, Buffer.concat(chunks)));
});
server.keepAliveTimeout = 5000;
server.on("secureConnection", (sock) => {
  sock._ll_conn = ++connSeq;
  sock._ll_idle_ms = idleCloseMs;
});
server.on("clientError", (err, sock) => sock.destroy());

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});

// Never outlive the drill that started it.
setTimeout(() => process.exit(0), lifetime).unref();
process.on("SIGTERM", () => process.exit(0));
