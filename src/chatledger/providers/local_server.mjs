// ChatLedger's local model server on node-llama-cpp: an OpenAI-compatible chat-completions
// endpoint on 127.0.0.1, for one GGUF model. Started and stopped by ChatLedger
// (chatledger/providers/_local_server.py); node-llama-cpp is found in the folder named by
// CHATLEDGER_NODE_MODULES (nothing is downloaded: its prebuilt CPU binaries come with the npm
// install).
//
//   GET  /health                  200 {"status": "ok"} once the model is loaded
//   GET  /v1/models               the one model
//   POST /v1/chat/completions     {model, messages, max_tokens, temperature, seed,
//                                  repeat_penalty, response_format: {type: "json_schema",
//                                  json_schema: {schema}}} → a chat.completion object
//
// Requests are answered one at a time (one context sequence, kept between requests: a prompt
// that begins like the previous one is evaluated only from where they differ, and
// usage.prompt_tokens_details.cached_tokens says how many tokens that saved). A response_format schema becomes
// a grammar (node-llama-cpp's JSON-schema grammar: no anyOf — ChatLedger sends its strict
// schema variant); a schema the grammar cannot take is a 400, on which the client falls back
// to asking for the schema in the prompt.

import http from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

const modelPath = option("model");
const port = Number(option("port", "0"));
const threads = Number(option("threads", "2"));
const contextSize = Number(option("context", "8192"));
const modelName = option("name", "local");
const modules = process.env.CHATLEDGER_NODE_MODULES;
if (!modelPath || !modules) {
  console.error("usage: local_server.mjs --model FILE --port N (CHATLEDGER_NODE_MODULES set)");
  process.exit(2);
}

const nlc = await import(pathToFileURL(join(modules, "node-llama-cpp", "dist", "index.js")).href);
const llama = await nlc.getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize, threads, sequences: 1 });
// One sequence for the server's life: its KV cache keeps the last request's tokens, and the next
// request evaluates only from the first token that differs. ChatLedger's prompts share a long
// fixed head (instructions, schema, example) before the conversation, so that is most of the
// prompt evaluation saved — on a CPU, where prompt evaluation is most of a request's time.
const sequence = context.getSequence();
const grammars = new Map();
let queue = Promise.resolve();
let served = 0;

async function grammarFor(schema) {
  const key = JSON.stringify(schema);
  if (!grammars.has(key)) grammars.set(key, await llama.createGrammarForJsonSchema(schema));
  return grammars.get(key);
}

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function complete(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const turns = messages.filter((m) => m.role !== "system");
  const last = turns.pop();
  if (!last || last.role !== "user") throw new HttpError(400, "the last message must be the user's");
  let grammar;
  const format = body.response_format;
  if (format && format.type === "json_schema") {
    try {
      grammar = await grammarFor(format.json_schema.schema);
    } catch (error) {
      throw new HttpError(400, `response_format json_schema is not supported: ${error.message}`);
    }
  }
  const before = sequence.tokenMeter.getState();
  const session = new nlc.LlamaChatSession({
    contextSequence: sequence,
    systemPrompt: system,
    autoDisposeSequence: false,
  });
  try {
    if (turns.length) {
      session.setChatHistory([
        ...(system ? [{ type: "system", text: system }] : []),
        ...turns.map((t) =>
          t.role === "assistant" ? { type: "model", response: [t.content] } : { type: "user", text: t.content },
        ),
      ]);
    }
    const temperature = typeof body.temperature === "number" ? body.temperature : 0;
    const result = await session.promptWithMeta(last.content, {
      grammar,
      maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : 1024,
      temperature,
      seed: typeof body.seed === "number" ? body.seed : 0,
      repeatPenalty:
        typeof body.repeat_penalty === "number" && body.repeat_penalty !== 1
          ? { penalty: body.repeat_penalty }
          : false,
    });
    const used = sequence.tokenMeter.diff(before);
    // The sequence now holds this prompt and the answer; the meter counts only the prompt tokens
    // evaluated, so the rest of the prompt came from the previous request's cache.
    const promptTokens = Math.max(used.usedInputTokens, sequence.contextTokens.length - used.usedOutputTokens);
    served += 1;
    return {
      id: `chatcmpl-local-${served}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: result.responseText },
          finish_reason: result.stopReason === "maxTokens" ? "length" : "stop",
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: used.usedOutputTokens,
        total_tokens: promptTokens + used.usedOutputTokens,
        prompt_tokens_details: { cached_tokens: promptTokens - used.usedInputTokens },
      },
    };
  } finally {
    session.dispose({ disposeSequence: false });
  }
}

function send(response, status, payload) {
  const data = Buffer.from(JSON.stringify(payload));
  response.writeHead(status, { "content-type": "application/json", "content-length": data.length });
  response.end(data);
}

const server = http.createServer((request, response) => {
  if (request.method === "GET" && request.url === "/health") return send(response, 200, { status: "ok" });
  if (request.method === "GET" && request.url === "/v1/models") {
    return send(response, 200, { object: "list", data: [{ id: modelName, object: "model" }] });
  }
  if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
    return send(response, 404, { error: { message: `no route ${request.method} ${request.url}` } });
  }
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf-8"));
    } catch {
      return send(response, 400, { error: { message: "the body is not JSON" } });
    }
    // One request at a time: the model has one context sequence.
    queue = queue.then(async () => {
      try {
        send(response, 200, await complete(body));
      } catch (error) {
        const status = error instanceof HttpError ? error.status : 500;
        send(response, status, { error: { message: String(error.message || error) } });
      }
    });
  });
});

server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port} (${modelName})`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
