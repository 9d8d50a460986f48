// e2e.mjs: the official `openai` npm client against `kvarena serve` (run by run-e2e.sh, which
// starts the servers). SERVE_URL: --parallel 8, no token, default policy: the plain cache.
// SMALL_URL: --parallel 1 --queue 1 --token secret. Expected KV peaks are computed here from
// the model's shape and kv/kv-logical-bytes.h's definition, not read from the server.
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const SERVE = process.env.SERVE_URL;
const SMALL = process.env.SMALL_URL;
const client = new OpenAI({ baseURL: `${SERVE}/v1`, apiKey: 'unused', maxRetries: 0 });
const small = new OpenAI({ baseURL: `${SMALL}/v1`, apiKey: 'secret', maxRetries: 0 });

// models/kvarena-agent.gguf: 6 layers, 2 KV heads, head_dim 64 (models/README.md).
const LAYERS = 6, KV_HEADS = 2, HEAD_DIM = 64;
const F32_TOKEN = 2 * HEAD_DIM * 4, F16_TOKEN = 2 * HEAD_DIM * 2, SCORE = 4;
const bytes = (tokens, perToken) => LAYERS * KV_HEADS * tokens * perToken;

const user = (content) => [{ role: 'user', content }];
// A long prompt (~700 tokens): an accessibility tree of the kind agents send.
const longPrompt = Array.from({ length: 60 }, (_, i) => `[${i + 100}] link 'Item ${i} for sale, price ${i * 7} dollars'`).join('\n');

async function health(url) {
  return (await fetch(`${url}/health`)).json();
}
async function until(what, fn, tries = 600) {  // bounded wait (10 ms steps), no time asserted
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('models lists the served model', async () => {
  const list = await client.models.list();
  assert.equal(list.data.length, 1);
  assert.equal(list.data[0].id, 'kvarena-agent');
});

test('a chat completion', async () => {
  const r = await client.chat.completions.create({
    model: 'kvarena-agent', messages: user('Find the cheapest bike.'), temperature: 0, max_tokens: 8, ignore_eos: true,
  });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.equal(r.choices[0].finish_reason, 'length');
  const u = r.usage;
  assert.equal(u.completion_tokens, 8);
  assert.ok(u.prompt_tokens > 5);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
  assert.equal(u.kv_policy, 'none');  // the server's default: the plain F32 cache
  assert.equal(u.peak_kv_logical_bytes, bytes(u.total_tokens, F32_TOKEN));
  assert.ok(u.prompt_ms >= 0 && u.decode_ms >= 0);
});

test('a stream gives the same text as the answer, then usage and [DONE]', async () => {
  const params = { model: 'm', messages: user('Open the forum.'), temperature: 0, max_tokens: 12, ignore_eos: true };
  const whole = await client.chat.completions.create(params);
  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let text = '', chunks = 0, finish = null, usage = null, role = null;
  for await (const c of stream) {
    chunks++;
    if (c.usage) usage = c.usage;
    if (!c.choices.length) continue;
    assert.equal(c.object, 'chat.completion.chunk');
    role ??= c.choices[0].delta.role;
    text += c.choices[0].delta.content ?? '';
    finish ??= c.choices[0].finish_reason;
  }
  assert.equal(role, 'assistant');
  assert.ok(chunks >= 3, `only ${chunks} chunks`);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 12);
});

test('a completion (raw prompt)', async () => {
  const r = await client.completions.create({ model: 'm', prompt: 'The price is', max_tokens: 4, temperature: 0, ignore_eos: true });
  assert.equal(r.object, 'text_completion');
  assert.equal(typeof r.choices[0].text, 'string');
  assert.equal(r.usage.completion_tokens, 4);
});

test('8 concurrent requests, each under its own KV policy, each with that policy\'s KV peak', async () => {
  const gen = 6;
  const cases = [
    { kv: undefined, label: /^none$/, peak: (n) => bytes(n, F32_TOKEN) },
    { kv: { policy: 'full' }, label: /^full/, peak: (n) => bytes(n, F16_TOKEN) },
    { kv: { policy: 'window', window: 64, sinks: 0 }, label: /^window:window=64:sinks=0$/, peak: () => bytes(64, F16_TOKEN) },
    { kv: { policy: 'window', budget: '128t' }, label: /^window:window=128/, peak: () => bytes(128, F16_TOKEN) },
    { kv: { policy: 'h2o', heavy: 32, recent: 32 }, label: /^h2o:heavy=32:recent=32/, peak: () => bytes(64, F16_TOKEN + SCORE) },
    { kv: { policy: 'confkv', n_high: 32, n_low: 96, protect: 16 }, label: /^confkv:/, below: true },
    { kv: { policy: 'confkv-l', budget: '128t' }, label: /^confkv-l:/, below: true },
    { kv: { policy: 'freekv', budget: 128, window: 32, sinks: 32 }, label: /^freekv:/, below: true },
  ];
  const answers = await Promise.all(cases.map((c) => client.chat.completions.create({
    model: 'm', messages: user(longPrompt), temperature: 0, max_tokens: gen, ignore_eos: true, ...(c.kv ? { kv: c.kv } : {}),
  })));
  const full = bytes(answers[0].usage.total_tokens, F16_TOKEN);
  assert.ok(answers[0].usage.prompt_tokens > 300, `prompt of ${answers[0].usage.prompt_tokens} tokens`);
  answers.forEach((a, i) => {
    const u = a.usage, c = cases[i];
    assert.equal(u.completion_tokens, gen);
    assert.match(u.kv_policy, c.label);
    if (c.peak) assert.equal(u.peak_kv_logical_bytes, c.peak(u.total_tokens), u.kv_policy);
    if (c.below) assert.ok(u.peak_kv_logical_bytes > 0 && u.peak_kv_logical_bytes < full, `${u.kv_policy}: ${u.peak_kv_logical_bytes} vs full ${full}`);
    console.log(`# ${u.kv_policy.padEnd(40)} peak_kv_logical_bytes ${u.peak_kv_logical_bytes} kept ${u.kv_kept_tokens}`);
  });
});

test('an unknown KV option is a 400 naming it', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: user('hi'), max_tokens: 2, kv: { policy: 'window', wndow: 64 } }),
    (e) => e.status === 400 && /wndow/.test(e.message) && /window, sinks/.test(e.message) && e.param === 'kv.wndow');
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: user('hi'), temperature: 'hot' }),
    (e) => e.status === 400 && e.param === 'temperature');
});

test('a body nested a million levels deep is a 400, and the server still answers', async () => {
  const body = `{"model": "m", "messages": ${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
  const r = await fetch(`${SERVE}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /nests deeper than 64 levels/);
  assert.equal((await client.models.list()).data.length, 1);
});

test('a token is required where the server has one', async () => {
  const noKey = new OpenAI({ baseURL: `${SMALL}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(noKey.models.list(), (e) => e.status === 401);
  assert.equal((await small.models.list()).data.length, 1);
});

test('a full queue answers 503; a client that leaves frees its slot', async () => {
  const before = await health(SMALL);
  // A1 holds the one slot (a stream that would run to the end of the context), A2 waits.
  const ac = new AbortController();
  const a1 = await small.chat.completions.create(
    { model: 'm', messages: user('hi'), max_tokens: 100000, ignore_eos: true, temperature: 0, stream: true },
    { signal: ac.signal });
  const it = a1[Symbol.asyncIterator]();
  await it.next();  // A1 is decoding
  const a2 = small.chat.completions.create({ model: 'm', messages: user('hi'), max_tokens: 3, temperature: 0, ignore_eos: true });
  await until('A2 queued', async () => (await health(SMALL)).slots.queued === 1);
  await assert.rejects(
    small.chat.completions.create({ model: 'm', messages: user('hi'), max_tokens: 3 }),
    (e) => e.status === 503 && /busy/.test(e.message));
  ac.abort();  // A1's client goes away mid-stream
  await it.next().catch(() => {});
  const r2 = await a2;  // served once A1's slot is free
  assert.equal(r2.usage.completion_tokens, 3);
  // A2 ran only after A1's worker let go of it: by then A1 counted as cancelled.
  assert.equal((await health(SMALL)).slots.cancelled, before.slots.cancelled + 1);
  await until('the slot free', async () => (await health(SMALL)).slots.active === 0);
});
