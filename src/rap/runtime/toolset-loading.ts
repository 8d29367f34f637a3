/**
 * Loading the configured toolsets for a runtime, start and refresh alike: discovery (discovery.ts), then one log
 * line per problem an operator should act on (a toolset that failed, an endpoint on another origin that gets no
 * credentials, a name two toolsets expose) and a summary. A failing toolset keeps its previous definition.
 */

import { peerText } from "../../core/display.ts";
import type { Logger } from "../../core/log.ts";
import { type Discovery, discoverToolsets, type LoadedToolset } from "./discovery.ts";
import { describeEndpoint } from "./http.ts";
import { endpointAuth, type ResolvedToolset } from "./toolset-config.ts";

export async function loadToolsets(options: {
  configs: ReadonlyMap<string, ResolvedToolset>;
  previous: Discovery;
  logger: Logger;
  allowInsecureHttp: boolean;
  fetch?: typeof fetch;
}): Promise<Discovery> {
  const { configs, logger } = options;
  const previous = new Map<string, LoadedToolset>(
    options.previous.toolsets.map((t) => [t.baseUrl, t]),
  );
  const discovery = await discoverToolsets(
    [...configs.keys()],
    {
      fetch: options.fetch,
      allowInsecureHttp: options.allowInsecureHttp,
      authFor: (baseUrl) => configs.get(baseUrl)?.auth,
    },
    previous,
  );
  for (const failure of discovery.failures) {
    // Configured URLs may carry credentials (user:pass@, ?key=): log them the way every other line does. The
    // error code goes under `errorCode`: the logger redacts any field named `code` (an OAuth authorization code).
    logger.warn("rap.runtime.toolset_failed", {
      baseUrl: describeEndpoint(failure.baseUrl),
      errorCode: failure.code,
      reason: peerText(failure.reason ?? failure.message),
    });
  }
  for (const set of discovery.toolsets) {
    const withheld = endpointAuth(configs.get(set.baseUrl), set.toolset.endpoint).withheldFrom;
    if (withheld) {
      logger.warn("rap.runtime.endpoint_other_origin", {
        baseUrl: describeEndpoint(set.baseUrl),
        endpoint: describeEndpoint(set.toolset.endpoint),
        reason:
          "invocations to it carry no credentials; list its origin in authOrigins if it is the tool's",
      });
    }
  }
  for (const clash of discovery.clashes) logger.warn("rap.runtime.name_clash", { ...clash });
  logger.info("rap.runtime.toolsets", {
    toolsets: discovery.toolsets.map((t) => t.toolset.name),
    tools: discovery.tools.size,
  });
  return discovery;
}
