// The JS SDK peer for leaselua's benchmarks (bench/run.sh): the seed's main
// handoff, done with the official @azure/storage-blob, as a careful user of
// the SDK would write it. It is a peer to measure against, not a tool: it
// records nothing durable and decides nothing.
//
//   node handoff.js handoff [--break-period 2] [--poll-ms 1000] [--stop-after 0]
//   node handoff.js reads [--n 200] [--warmup 10]
//
// Environment: AZURE_STORAGE_ACCOUNT_URL, AZURE_STORAGE_TOKEN,
// AZURE_STORAGE_CONTAINER, AZURE_STORAGE_BLOB; NODE_EXTRA_CA_CERTS names
// the emulator's certificate (the driver sets it for this process only).
//
// Set-up, as the issue asks:
// - a static TokenCredential that returns AZURE_STORAGE_TOKEN;
// - retryOptions {maxTries: 1}: one attempt per operation;
// - a per-call pipeline policy that sets x-ms-version 2023-11-03 (the SDK
//   sends its own service version whatever the options say);
// - every PUT and DELETE (all mutations, lease actions included) on a fresh
//   connection, like leaselua: the request leaves the SDK's keep-alive pool
//   (disableKeepAlive) and says "Connection: close", so no socket is ever
//   reused for it; reads use the SDK's default keep-alive agent;
// - downloads with maxRetryRequests 0 (no hidden re-read).
// Prints one JSON line of figures; exit 0 when every step had the baseline
// outcome, 2 otherwise.
"use strict";

const t_loaded0 = process.hrtime.bigint();
const crypto = require("node:crypto");
const { BlockBlobClient, ContainerClient, newPipeline } = require("@azure/storage-blob");
const sdkVersion = require("@azure/storage-blob/package.json").version;
const t_loaded1 = process.hrtime.bigint();

const API_VERSION = "2023-11-03";
const ms = (a, b) => Number(b - a) / 1e6;
const now = () => process.hrtime.bigint();

function parseArgs(argv) {
  const o = { mode: argv[0] || "handoff", breakPeriod: 2, pollMs: 1000, stopAfter: -1, n: 200, warmup: 10 };
  for (let i = 1; i < argv.length; i += 2) {
    const k = argv[i], v = Number(argv[i + 1]);
    if (!Number.isFinite(v)) throw new Error(`bad value for ${k}`);
    if (k === "--break-period") o.breakPeriod = v;
    else if (k === "--poll-ms") o.pollMs = v;
    else if (k === "--stop-after") o.stopAfter = v;
    else if (k === "--n") o.n = v;
    else if (k === "--warmup") o.warmup = v;
    else throw new Error(`unknown argument ${k}`);
  }
  return o;
}

function env(name, dflt) {
  const v = process.env[name] || dflt;
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function clients() {
  const token = env("AZURE_STORAGE_TOKEN");
  const credential = {
    getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3600 * 1000 }),
  };
  const pinVersion = {
    name: "leaselua-bench-pin-x-ms-version",
    sendRequest(request, next) {
      request.headers.set("x-ms-version", API_VERSION);
      if (request.method === "PUT" || request.method === "DELETE") {
        request.disableKeepAlive = true;
        request.headers.set("Connection", "close");
      }
      return next(request);
    },
  };
  // One pipeline per client: core-client adds additionalPolicies to the
  // pipeline of every client built on it, and child clients share theirs.
  const pipeline = () => newPipeline(credential, {
    retryOptions: { maxTries: 1 },
    additionalPolicies: [{ policy: pinVersion, position: "perCall" }],
  });
  const url = env("AZURE_STORAGE_ACCOUNT_URL").replace(/\/+$/, "");
  const cname = env("AZURE_STORAGE_CONTAINER", "lease-handoff-lab");
  const bname = env("AZURE_STORAGE_BLOB", "writer-handoff.json");
  const container = new ContainerClient(`${url}/${cname}`, pipeline());
  const blob = new BlockBlobClient(`${url}/${cname}/${encodeURIComponent(bname)}`, pipeline());
  return { container, blob };
}

const payload = (rev, writer) =>
  Buffer.from(`{"purpose":"lease-handoff-lab","revision":${rev},"writer":"${writer}"}`);
const sha = (buf) => crypto.createHash("sha256").update(buf).digest("hex");

// One step: its HTTP status (a RestError's too), never a throw for a status.
async function status(p) {
  try {
    const r = await p;
    return { status: r._response ? r._response.status : 200, r };
  } catch (e) {
    if (e && typeof e.statusCode === "number") return { status: e.statusCode, code: e.code };
    throw e;
  }
}

async function readContent(blob) {
  const r = await blob.download(0, undefined, { maxRetryRequests: 0 });
  const chunks = [];
  for await (const c of r.readableStreamBody) chunks.push(c);
  return sha(Buffer.concat(chunks));
}

const sleep = (msec) => new Promise((res) => setTimeout(res, msec));

async function handoff(o) {
  const t0 = now();
  const { container, blob } = clients();
  const bad = [];
  const expect = (label, got, want) => {
    if (got !== want) bad.push(`${label}: ${got}, expected ${want}`);
  };
  const idA = crypto.randomUUID(), idB = crypto.randomUUID();
  const leaseA = blob.getBlobLeaseClient(idA), leaseB = blob.getBlobLeaseClient(idB);
  const withLease = (id) => ({ conditions: { leaseId: id } });
  const put = (rev, writer, opts) => blob.upload(payload(rev, writer), payload(rev, writer).length, opts || {});
  const shaOf = {};
  for (const [rev, w] of [[0, "A"], [1, "A"], [3, "A"], [5, "B"]]) shaOf[rev] = sha(payload(rev, w));
  const out = { who: "js", sdk: `@azure/storage-blob ${sdkVersion}`, mode: "handoff", break_period: o.breakPeriod,
    poll_ms: o.pollMs, require_ms: ms(t_loaded0, t_loaded1) };

  const c = await status(container.create());
  out.first_request_done_ms = ms(t0, now());
  if (![201, 409].includes(c.status)) bad.push(`create container: ${c.status}`);
  if (o.stopAfter === 0) return finish(out, bad, t0);

  expect("rev 0", (await status(put(0, "A"))).status, 201);
  expect("read rev 0", await readContent(blob), shaOf[0]);
  expect("acquire A", (await status(leaseA.acquireLease(-1))).status, 201);
  expect("rev 1 with A", (await status(put(1, "A", withLease(idA)))).status, 201);
  expect("read rev 1", await readContent(blob), shaOf[1]);
  expect("rev 2 without lease", (await status(put(2, "A"))).status, 412);
  expect("rev 1 still there", await readContent(blob), shaOf[1]);
  expect("unconditioned read", await readContent(blob), shaOf[1]);
  await blob.getProperties();
  const brk = await status(leaseA.breakLease(o.breakPeriod));
  const breakEnd = now();
  expect("break", brk.status, 202);
  const leaseTime = brk.r && typeof brk.r.leaseTime === "number" ? brk.r.leaseTime : o.breakPeriod;

  // The bracketed probe: properties, Put rev 3 with A (fresh connection),
  // properties; only when the first read shows breaking/locked.
  const b0 = now();
  const before = await blob.getProperties();
  if (before.leaseState === "breaking" && before.leaseStatus === "locked") {
    expect("rev 3 probe", (await status(put(3, "A", withLease(idA)))).status, 201);
    const after = await blob.getProperties();
    out.bracket_ms = ms(b0, now());
    out.window = after.leaseState === "breaking" && after.leaseStatus === "locked" ? "REPRODUCED" : "INCONCLUSIVE";
  } else {
    out.window = "LATE";
  }
  await readContent(blob);
  const fresh = await blob.getProperties();
  if (fresh.leaseState === "breaking") {
    expect("B acquire while breaking", (await status(leaseB.acquireLease(-1))).status, 409);
  }
  // Poll until broken: a fixed cadence (--poll-ms), like the seed.
  let polls = 0, seen = null;
  for (;;) {
    const p = await blob.getProperties();
    polls++;
    if (p.leaseState === "broken" && p.leaseStatus === "unlocked") {
      seen = now();
      break;
    }
    if (p.leaseState !== "breaking" || polls > 1000) {
      bad.push(`poll: unexpected ${p.leaseState}/${p.leaseStatus}`);
      return finish(out, bad, t0);
    }
    await sleep(o.pollMs);
  }
  out.polls = polls;
  out.lag_ms = ms(breakEnd, seen) - leaseTime * 1000;
  expect("rev 4 with stale A", (await status(put(4, "A", withLease(idA)))).status, 412);
  expect("acquire B", (await status(leaseB.acquireLease(-1))).status, 201);
  expect("rev 5 with B", (await status(put(5, "B", withLease(idB)))).status, 201);
  expect("read rev 5", await readContent(blob), shaOf[5]);
  expect("rev 6 with A", (await status(put(6, "A", withLease(idA)))).status, 412);
  expect("rev 5 still there", await readContent(blob), shaOf[5]);
  expect("release B", (await status(leaseB.releaseLease())).status, 200);
  await blob.getProperties();
  expect("delete", (await status(blob.delete())).status, 202);
  return finish(out, bad, t0);
}

function finish(out, bad, t0) {
  out.wall_in_process_ms = ms(t0, now());
  out.ok = bad.length === 0;
  if (bad.length) out.problems = bad;
  console.log(JSON.stringify(out));
  return bad.length ? 2 : 0;
}

async function reads(o) {
  const { container, blob } = clients();
  await status(container.create());
  const up = await status(blob.upload(payload(0, "A"), payload(0, "A").length));
  if (up.status !== 201) throw new Error(`upload answered ${up.status}`);
  const d = [];
  for (let i = 0; i < o.warmup + o.n; i++) {
    const a = now();
    await blob.getProperties();
    const b = now();
    if (i >= o.warmup) d.push(ms(a, b));
  }
  await blob.delete();
  d.sort((x, y) => x - y);
  const q = (p) => d[Math.max(0, Math.ceil(p * d.length) - 1)];
  const mean = d.reduce((s, x) => s + x, 0) / d.length;
  console.log(JSON.stringify({ who: "js", mode: "reads", e2e_ms: { p50: q(0.5), p90: q(0.9), mean, n: d.length } }));
  return 0;
}

const o = parseArgs(process.argv.slice(2));
(o.mode === "reads" ? reads(o) : handoff(o)).then(
  (code) => { process.exitCode = code; },
  (e) => { console.error(`handoff.js: ${e && e.stack ? e.stack : e}`); process.exitCode = 70; },
);
