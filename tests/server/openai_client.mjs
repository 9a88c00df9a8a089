// The official `openai` npm client against a running ember-server (tests/server/check_openai_client.py
// starts the server, installs the package and runs this file).
//   node openai_client.mjs BASE_URL PACKAGE_DIR
// PACKAGE_DIR holds node_modules/openai. Prints "openai client checks passed"; any failure
// throws (exit code 1).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';

const [baseURL, packageDir] = process.argv.slice(2);
const require = createRequire(path.join(packageDir, 'package.json'));
const OpenAI = require('openai');
const client = new OpenAI({ baseURL, apiKey: 'sekrit', timeout: 60_000, maxRetries: 0 });
const log = (s) => console.log(s);

const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Tell me a story.' }];

// Chat: a whole answer, then the same request streamed.
const chat = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 24, temperature: 0 });
assert.equal(chat.object, 'chat.completion');
assert.equal(chat.choices[0].message.role, 'assistant');
assert.equal(typeof chat.choices[0].message.content, 'string');
assert.ok(['stop', 'length'].includes(chat.choices[0].finish_reason));
assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + chat.usage.completion_tokens);
log(`chat: ${chat.usage.completion_tokens} tokens`);

const stream = await client.chat.completions.create({
  model: 'stories', messages, max_tokens: 24, temperature: 0, stream: true,
  stream_options: { include_usage: true },
});
let text = '';
let usage = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    text += c.delta.content ?? '';
    finish = c.finish_reason ?? finish;
  }
}
assert.equal(text, chat.choices[0].message.content);
assert.equal(finish, chat.choices[0].finish_reason);
assert.deepEqual(usage.completion_tokens, chat.usage.completion_tokens);
log('chat stream: the same text, finish_reason and usage');

// n choices: choice i is the request alone with seed + i.
const sampled = { model: 'stories', messages, max_tokens: 16, temperature: 1, seed: 40 };
const many = await client.chat.completions.create({ ...sampled, n: 3 });
assert.deepEqual(many.choices.map((c) => c.index), [0, 1, 2]);
for (const c of many.choices) {
  const alone = await client.chat.completions.create({ ...sampled, seed: 40 + c.index });
  assert.equal(c.message.content, alone.choices[0].message.content);
}
log('n = 3: each choice equals its seed alone');

// Structured output: json_schema through the grammar stage.
const schema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
  required: ['name', 'age'],
  additionalProperties: false,
};
for (const seed of [1, 2, 3]) {
  const r = await client.chat.completions.create({
    model: 'stories', messages, max_tokens: 200, temperature: 1, seed,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
  });
  assert.equal(r.choices[0].finish_reason, 'stop');
  const person = JSON.parse(r.choices[0].message.content);
  assert.deepEqual(Object.keys(person).sort(), ['age', 'name']);
  assert.equal(typeof person.name, 'string');
  assert.ok(Number.isInteger(person.age) && person.age >= 0 && person.age <= 99, JSON.stringify(person));
}
log('json_schema: 3 seeded answers parse and match the schema');

// Tools: a forced call (the server's chat template is Qwen 2.5's, Hermes format) parses and
// matches its schema, streamed too; the call and its result go back as messages.
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
      required: ['city', 'unit'],
    },
  },
}];
const ask = [{ role: 'user', content: 'What is the weather in Paris?' }];
const called = await client.chat.completions.create({
  model: 'stories', messages: ask, tools, tool_choice: 'required', parallel_tool_calls: false,
  max_tokens: 120, temperature: 0,
});
assert.equal(called.choices[0].finish_reason, 'tool_calls');
const calls = called.choices[0].message.tool_calls;
assert.equal(calls.length, 1);
assert.equal(calls[0].type, 'function');
assert.equal(calls[0].function.name, 'get_weather');
const args = JSON.parse(calls[0].function.arguments);
assert.equal(typeof args.city, 'string');
assert.ok(['c', 'f'].includes(args.unit), calls[0].function.arguments);

const streamedCalls = await client.chat.completions.create({
  model: 'stories', messages: ask, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } },
  parallel_tool_calls: false, max_tokens: 120, temperature: 0, stream: true,
});
const parts = [];
let streamFinish = null;
for await (const chunk of streamedCalls) {
  for (const c of chunk.choices) {
    for (const d of c.delta.tool_calls ?? []) {
      parts[d.index] ??= { name: '', arguments: '' };
      parts[d.index].name += d.function?.name ?? '';
      parts[d.index].arguments += d.function?.arguments ?? '';
    }
    streamFinish = c.finish_reason ?? streamFinish;
  }
}
assert.equal(streamFinish, 'tool_calls');
assert.equal(parts.length, 1);
assert.equal(parts[0].name, 'get_weather');
assert.deepEqual(JSON.parse(parts[0].arguments), args);

const after = await client.chat.completions.create({
  model: 'stories', tools, max_tokens: 16, temperature: 0,
  messages: [...ask, called.choices[0].message,
             { role: 'tool', tool_call_id: calls[0].id, content: '{"temp": 21}' }],
});
assert.equal(typeof after.choices[0].message.content, 'string');
log('tools: a forced call, the same call streamed, and its result sent back');

// Legacy completions, with logprobs; models.
const done = await client.completions.create({ model: 'stories', prompt: 'Once upon a time', max_tokens: 8,
                                                temperature: 0, logprobs: 2 });
assert.equal(done.choices[0].logprobs.tokens.length, done.usage.completion_tokens);
assert.equal(done.choices[0].logprobs.tokens.join(''), done.choices[0].text);
const models = await client.models.list();
assert.equal(models.data[0].id, 'stories');
log('completions with logprobs, models.list: ok');

// Errors surface as the client's typed errors with OpenAI's body.
await assert.rejects(
  client.chat.completions.create({ model: 'stories', messages, temperature: 7 }),
  (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /'temperature'/.test(e.message));
const noKey = new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 });
await assert.rejects(noKey.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
log('400 and 401 as BadRequestError and AuthenticationError');

console.log('openai client checks passed');
