// bench-serve.mjs: a load generator for OpenAI-compatible servers (scripts/bench-serve.sh runs
// it against `kvarena serve` and llama.cpp's llama-server). Sends --requests streamed chat
// completions, --concurrency at a time, each with a prompt of agent size (an accessibility
// tree of --lines lines, a unique first line so no server reuses a cached prefix), greedy,
// --max-tokens tokens each (ignore_eos, so both servers generate the same count). Measures
// per request the time to the first content token and to the end; prints one JSON line:
// requests/s over the wall time, medians of TTFT and latency, tokens. Node's fetch only.
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const url = args.url, label = args.label ?? url;
const requests = Number(args.requests ?? 16), concurrency = Number(args.concurrency ?? 4);
const maxTokens = Number(args['max-tokens'] ?? 32), lines = Number(args.lines ?? 50);
const extra = args.extra ? JSON.parse(args.extra) : {};

const page = Array.from({ length: lines }, (_, i) =>
  `[${1000 + i}] link 'Listing ${i}: used bicycle, ${i % 7 + 2} gears, $${(i * 37) % 900 + 50}' url: /item/${i}`).join('\n');
const prompt = (n) => `Request ${n}. OBJECTIVE: find the cheapest bicycle and open it.\nOBSERVATION:\n${page}\nWhat is the next action?`;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function one(n) {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: 'bench', messages: [{ role: 'user', content: prompt(n) }], max_tokens: maxTokens, temperature: 0,
      ignore_eos: true, stream: true, stream_options: { include_usage: true }, ...extra,
    }),
  });
  if (!res.ok) throw new Error(`${label}: HTTP ${res.status}: ${await res.text()}`);
  let ttft = null, buf = '', usage = null, pieces = 0;
  const dec = new TextDecoder();
  for await (const chunk of res.body) {
    buf += dec.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i).trim();
      buf = buf.slice(i + 2);
      if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
      const j = JSON.parse(ev.slice(6));
      if (j.usage) usage = j.usage;
      const c = j.choices?.[0]?.delta?.content;
      if (c) {
        pieces++;
        ttft ??= performance.now() - t0;
      }
    }
  }
  return { ttft, latency: performance.now() - t0, usage, pieces };
}

const results = [];
let next = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < requests) results.push(await one(next++));
}));
const wall = (performance.now() - t0) / 1000;
const completion = results.reduce((s, r) => s + (r.usage?.completion_tokens ?? r.pieces), 0);
console.log(JSON.stringify({
  server: label, requests, concurrency, max_tokens: maxTokens,
  prompt_tokens: results[0].usage?.prompt_tokens ?? null,
  wall_s: +wall.toFixed(3), req_per_s: +(requests / wall).toFixed(3),
  ttft_ms_median: +median(results.map((r) => r.ttft)).toFixed(1),
  latency_ms_median: +median(results.map((r) => r.latency)).toFixed(1),
  completion_tokens: completion, gen_tok_per_s: +(completion / wall).toFixed(1),
}));
