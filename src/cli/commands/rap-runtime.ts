/**
 * `agentauth rap runtime serve`: a RAP runtime on loopback. One listener serves the callback receiver
 * (`/callback/<signed capability>`) and a small JSON control API for whoever plays the model:
 * `GET /tools`, `POST /calls {operation, arguments, group_id, user_id?, toolset?}`, `GET /threads/<group_id>`.
 * The control API needs `Authorization: Bearer <token>`, the token being in a 0600 file named in the ready line.
 */

import { randomBytes, timingSafeEqual } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { AgentAuthError } from "../../core/errors.ts";
import { ensureHome } from "../../core/home.ts";
import { createLogger } from "../../core/log.ts";
import { createRuntime, type RapRuntime } from "../../rap/runtime/index.ts";
import { MAX_BODY_BYTES } from "../../rap/wire.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { parseInteger } from "./idp.ts";

const CallRequestSchema = z.object({
  operation: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()).default({}),
  group_id: z.string().min(1).max(512),
  user_id: z.string().min(1).max(512).nullish(),
  toolset: z.string().max(128).optional(),
});

export async function runtimeServeCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      toolset: { type: "string", multiple: true, default: [] },
      port: { type: "string", default: "0" },
      db: { type: "string" },
      "call-timeout": { type: "string" },
    },
    strict: true,
  });
  if (values.toolset.length === 0)
    throw new UsageError("rap runtime serve needs at least one --toolset URL");
  const home = ensureHome(io.env);
  const logger = createLogger({ fields: { component: "rap-runtime" } });
  const server = createServer();
  await new Promise<void>((resolve) =>
    server.listen(parseInteger(values.port, "--port", 0, 65535), "127.0.0.1", resolve),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const runtime = await createRuntime({
    toolsetUrls: values.toolset,
    dbPath: values.db,
    env: io.env,
    publicBaseUrl: url,
    callTimeoutMs: values["call-timeout"]
      ? parseInteger(values["call-timeout"], "--call-timeout", 1, 86_400) * 1000
      : undefined,
    logger,
    hooks: {
      // The hand-off: a terminal prints the link; the runtime itself keeps no copy.
      onAuthorizationRequired: (event) => {
        io.stderr(
          `Authorization required for ${event.operation} (call ${event.id}): open ${event.authUrl}\n`,
        );
      },
    },
  });
  const control = randomBytes(32).toString("base64url");
  const controlTokenFile = join(home, "rap-runtime-control.token");
  writeFileSync(controlTokenFile, control, { mode: 0o600 });
  server.on("request", (req, res) => {
    if (req.url?.startsWith("/callback/")) return runtime.handleCallback(req, res);
    handleControl(runtime, control, req, res).catch((error) => {
      logger.error("rap.control_failed", { error });
      if (!res.headersSent) send(res, 500, { error: "internal_error" });
    });
  });
  io.stdout(
    `${JSON.stringify({ event: "ready", url, controlTokenFile, tools: runtime.listTools().map((t) => t.name) })}\n`,
  );
  await untilTerminated();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await runtime.close();
  return EXIT.ok;
}

async function handleControl(
  runtime: RapRuntime,
  token: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const presented = Buffer.from(String(req.headers.authorization ?? "").replace(/^Bearer /, ""));
  const expected = Buffer.from(token);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    return send(
      res,
      401,
      { error: "unauthorized" },
      { "www-authenticate": 'Bearer realm="agentauth-rap-runtime"' },
    );
  }
  const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
  if (req.method === "GET" && path === "/tools") return send(res, 200, runtime.listTools());
  if (req.method === "GET" && path.startsWith("/threads/")) {
    return send(res, 200, await runtime.thread(decodeURIComponent(path.slice("/threads/".length))));
  }
  if (req.method === "POST" && path === "/calls") {
    const body = await readJson(req);
    const parsed = CallRequestSchema.safeParse(body);
    if (!parsed.success)
      return send(res, 400, { error: "invalid_request", message: parsed.error.issues[0]?.message });
    try {
      const outcome = await runtime.invoke({
        operation: parsed.data.operation,
        arguments: parsed.data.arguments,
        groupId: parsed.data.group_id,
        userId: parsed.data.user_id ?? null,
        toolset: parsed.data.toolset,
      });
      return send(res, 202, outcome);
    } catch (error) {
      if (error instanceof AgentAuthError) return send(res, 400, error.toJSON());
      throw error;
    }
  }
  send(res, 404, { error: "not_found" });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(JSON.stringify(body));
}
