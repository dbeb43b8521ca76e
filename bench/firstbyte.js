// Time to first request, measured from outside the measured process.
//
// A plain TCP relay on loopback stands in front of Azurite (TLS passes
// through untouched: the emulator's certificate names 127.0.0.1, so the
// relay's port is as good as Azurite's). For each run it spawns the command
// with AZURE_STORAGE_ACCOUNT_URL pointing at the relay, and takes
//   t0 = process.hrtime before spawn()  (CLOCK_MONOTONIC, ns)
//   t1 = process.hrtime when the first byte of the first connection arrives
//        (the TLS ClientHello of the first request)
// so t1 - t0 covers fork/exec, dynamic loading, start-up and everything the
// tool does before its first request. It also counts the TCP connections the
// process opened, and how many of them were full TLS handshakes rather than
// resumed ones: the server's first flight (the bytes it sends before the
// client's second write) carries the certificate only in a full handshake
// (about 1.4 kB with the emulator's RSA certificate, against about 0.3 kB
// for a resumption).
//
// usage: node bench/firstbyte.js --upstream HOST:PORT --path /devstoreaccount1
//          [--runs 5] [--warmup 1] [--who NAME] [--ok-exits 0,2] -- CMD ARGS...
// "{URL}" and "{RUN}" in ARGS and in AZURE_STORAGE_BLOB are replaced per
// run. --ok-exits (default 0) lists the exit codes that count as success.
// Prints one JSON line per measured run; exits 1 if a run failed.
"use strict";
const net = require("node:net");
const { spawn } = require("node:child_process");

function parse(argv) {
  const o = { runs: 5, warmup: 1, who: "cmd", path: "/devstoreaccount1", "ok-exits": "0" };
  let i = 0;
  for (; i < argv.length && argv[i] !== "--"; i += 2) {
    const k = argv[i].replace(/^--/, ""), v = argv[i + 1];
    if (!(k in { upstream: 1, path: 1, runs: 1, warmup: 1, who: 1, "ok-exits": 1 })) throw new Error(`unknown option ${argv[i]}`);
    o[k] = k === "runs" || k === "warmup" ? Number(v) : v;
  }
  o.cmd = argv.slice(i + 1);
  o.okExits = String(o["ok-exits"]).split(",").map(Number);
  if (!o.upstream || !o.cmd.length) throw new Error("need --upstream HOST:PORT and -- CMD");
  return o;
}

const o = parse(process.argv.slice(2));
const [uhost, uport] = o.upstream.split(":");
let current = null; // the run being measured
const FULL_HANDSHAKE_BYTES = 800;

const relay = net.createServer({ noDelay: true }, (client) => {
  const run = current;
  if (run) run.connections++;
  const up = net.connect({ host: uhost, port: Number(uport), noDelay: true });
  let writes = 0, firstFlight = 0;
  client.on("data", () => {
    if (run && run.t1 === null) run.t1 = process.hrtime.bigint();
    if (++writes === 2 && run && firstFlight > FULL_HANDSHAKE_BYTES) run.full_handshakes++;
  });
  up.on("data", (d) => {
    if (writes < 2) firstFlight += d.length;
  });
  client.pipe(up);
  up.pipe(client);
  const close = () => { client.destroy(); up.destroy(); };
  client.on("error", close);
  up.on("error", close);
  client.on("close", close);
  up.on("close", close);
});

function once(i) {
  return new Promise((resolve) => {
    const url = `https://127.0.0.1:${relay.address().port}${o.path}`;
    const sub = (s) => s.replaceAll("{URL}", url).replaceAll("{RUN}", String(i));
    const env = { ...process.env, AZURE_STORAGE_ACCOUNT_URL: url };
    if (env.AZURE_STORAGE_BLOB) env.AZURE_STORAGE_BLOB = sub(env.AZURE_STORAGE_BLOB);
    const run = { connections: 0, full_handshakes: 0, t1: null };
    current = run;
    const args = o.cmd.slice(1).map(sub);
    const t0 = process.hrtime.bigint();
    const child = spawn(o.cmd[0], args, { env, stdio: ["ignore", "pipe", "inherit"] });
    const tSpawned = process.hrtime.bigint();
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.on("close", (code) => {
      current = null;
      const ms = (a, b) => (b === null ? null : Number(b - a) / 1e6);
      resolve({ who: o.who, run: i, ttfr_ms: ms(t0, run.t1), spawn_ms: ms(t0, tSpawned),
        connections: run.connections, full_tls_handshakes: run.full_handshakes, exit: code, stdout_tail: out.trim().split("\n").slice(-1)[0] || "" });
    });
  });
}

relay.listen(0, "127.0.0.1", async () => {
  let failed = 0;
  for (let i = 1; i <= o.warmup + o.runs; i++) {
    const r = await once(i);
    if (!o.okExits.includes(r.exit) || r.ttfr_ms === null) {
      failed++;
      console.error(`firstbyte: run ${i} of ${o.who}: exit ${r.exit}, first byte ${r.ttfr_ms}`);
    }
    if (i > o.warmup) console.log(JSON.stringify(r));
  }
  relay.close();
  process.exitCode = failed ? 1 : 0;
});
